// The worker runtime: one long-poll fetches a batch of jobs for the free
// slots (at most `concurrency` run at once), one batched heartbeat keeps
// every running job's lease with its progress and stops the jobs the
// server cancelled, acks and fails carry the lease token and the
// handler's stack, and a graceful shutdown (stop(), an aborted signal, or
// SIGTERM/SIGINT) stops fetching, waits for running jobs, then fails
// those left with "worker_shutdown" so they retry elsewhere.

import { type AIUsage, PendingUsage } from "./ai.js";
import type { Client } from "./client.js";
import { isRetryable, JobbieError, WorkerDrainingError } from "./errors.js";
import { randomId, sleep } from "./http.js";
import { describeError, type Handler, Job, NonRetryableError } from "./job.js";
import { inProcessSpan, type TracerProviderLike } from "./otel.js";
import { runInTrace } from "./trace.js";
import type { FetchedJob, HeartbeatEntry, HeartbeatStatus } from "./types.js";

export interface Logger {
  warn(msg: string, ...args: unknown[]): void;
  error(msg: string, ...args: unknown[]): void;
}

export interface WorkerOptions {
  /** Queues to fetch from, in the server's priority order. Required. */
  queues: string[];
  /** How many jobs run at once. Default 10. */
  concurrency?: number;
  /** Names this worker in the console. Default "<hostname>-<random>". */
  workerId?: string;
  /** Reported with every fetch. Default $HOSTNAME, else "worker". */
  hostname?: string;
  /** Lease asked for, in seconds. Default: the job's, else the queue's (60 s). */
  leaseDurationSec?: number;
  /** Heartbeat interval in ms. Default 15 s, or a third of the shortest running lease. */
  heartbeatIntervalMs?: number;
  /** Seconds one fetch long-polls (1-60). Default 30. */
  fetchTimeoutSec?: number;
  /** How long running jobs may finish after a shutdown begins, in ms. Default 30 s. */
  shutdownGraceMs?: number;
  /** Shut down gracefully on SIGTERM and SIGINT (where `process` exists). Default true. */
  handleSignals?: boolean;
  logger?: Logger;
  /**
   * Records each job's `process <queue>` span (README, "Trace context").
   * Default: @opentelemetry/api's global provider when that package is
   * installed; without it nothing is recorded.
   */
  tracerProvider?: TracerProviderLike;
}

const MIN_HEARTBEAT_TIMEOUT_MS = 5000;

/** Runs a handler for the jobs of some queues. */
export class Worker {
  readonly id: string;
  private readonly o: Required<Omit<WorkerOptions, "leaseDurationSec" | "heartbeatIntervalMs" | "tracerProvider">> &
    Pick<WorkerOptions, "leaseDurationSec" | "heartbeatIntervalMs" | "tracerProvider">;
  private readonly active = new Map<string, Job>();
  private readonly reports = new Set<Promise<void>>();
  private stopping = false;
  /** The server asked it to stop taking jobs (Client.drainWorker); run() resolves once it holds none. */
  drained = false;
  private closed = false; // shutdown gave up on running jobs
  private started = false;
  private fatal: unknown;
  private readonly fetchCtl = new AbortController();
  private slotFreed: (() => void) | null = null;
  private hbWake: (() => void) | null = null;

  constructor(private readonly client: Client, opts: WorkerOptions, private readonly handler: Handler) {
    if (!opts.queues?.length) throw new TypeError("jobbie: worker: no queues");
    const concurrency = opts.concurrency ?? 10;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`jobbie: worker: concurrency ${concurrency} is below 1`);
    const fetchTimeoutSec = opts.fetchTimeoutSec ?? 30;
    if (!(fetchTimeoutSec > 0 && fetchTimeoutSec <= 60)) throw new TypeError("jobbie: worker: fetchTimeoutSec must be above 0 and at most 60");
    const lease = opts.leaseDurationSec;
    if (lease !== undefined && opts.heartbeatIntervalMs !== undefined && opts.heartbeatIntervalMs >= lease * 1000) {
      throw new TypeError(`jobbie: worker: heartbeat interval ${opts.heartbeatIntervalMs} ms is not shorter than the lease ${lease} s`);
    }
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    const hostname = opts.hostname ?? env?.HOSTNAME ?? "worker";
    this.o = {
      concurrency, fetchTimeoutSec, hostname,
      workerId: opts.workerId ?? `${hostname}-${randomId().slice(0, 8)}`,
      queues: [...opts.queues],
      leaseDurationSec: lease,
      heartbeatIntervalMs: opts.heartbeatIntervalMs,
      shutdownGraceMs: opts.shutdownGraceMs ?? 30000,
      handleSignals: opts.handleSignals ?? true,
      logger: opts.logger ?? console,
      tracerProvider: opts.tracerProvider,
    };
    this.id = this.o.workerId;
  }

  /** The jobs running now. */
  get running(): number {
    return this.active.size;
  }

  /** Begins a graceful shutdown; run() resolves when it is done. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.fetchCtl.abort(new Error("worker stopping")); // a long-poll the worker hangs up on leases nothing
    this.slotFreed?.();
  }

  /**
   * Works until stop(), signal aborts, or SIGTERM/SIGINT, then shuts down
   * gracefully and resolves. Rejects early if the server refuses the
   * worker (bad key, forbidden, unknown namespace): a 4xx other than 408
   * and 429 on fetch.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error("jobbie: worker: run called twice");
    this.started = true;
    const onAbort = () => this.stop();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) this.stop();
    const proc = (globalThis as { process?: { on(e: string, f: () => void): void; off(e: string, f: () => void): void } }).process;
    const signals = this.o.handleSignals && proc?.on ? ["SIGTERM", "SIGINT"] : [];
    for (const s of signals) proc!.on(s, onAbort);
    const hb = this.heartbeatLoop();
    try {
      await this.fetchLoop();
      await this.awaitJobs();
    } finally {
      this.stopping = true;
      this.hbWake?.();
      await hb;
      while (this.reports.size > 0) await Promise.all([...this.reports]);
      for (const s of signals) proc!.off(s, onAbort);
      signal?.removeEventListener("abort", onAbort);
    }
    if (this.fatal !== undefined) throw this.fatal;
  }

  private async fetchLoop(): Promise<void> {
    const bo = this.client.t.backoff();
    while (!this.stopping) {
      const free = this.o.concurrency - this.active.size;
      if (free <= 0) {
        await new Promise<void>((r) => (this.slotFreed = r));
        this.slotFreed = null;
        continue;
      }
      let jobs: FetchedJob[];
      try {
        jobs = await this.client.fetchBatch({
          queues: this.o.queues, worker_id: this.o.workerId, hostname: this.o.hostname, max: free,
          timeout: this.o.fetchTimeoutSec, lease_duration: this.o.leaseDurationSec,
        }, { signal: this.fetchCtl.signal });
      } catch (err) {
        if (this.stopping) return;
        if (err instanceof WorkerDrainingError) {
          this.o.logger.warn(`jobbie worker ${this.o.workerId}: drained, finishing held jobs`);
          this.drained = true;
          this.stop();
          return;
        }
        if (err instanceof JobbieError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) {
          this.o.logger.error(`jobbie worker ${this.o.workerId}: fetch refused, stopping: ${err.message}`);
          this.fatal = err;
          this.stop();
          return;
        }
        this.o.logger.warn(`jobbie worker ${this.o.workerId}: fetch failed: ${(err as Error).message}`);
        await sleep(bo.next(err), this.fetchCtl.signal);
        continue;
      }
      bo.reset();
      for (const fj of jobs) void this.process(fj);
    }
  }

  /** Waits for running jobs, at most shutdownGraceMs, then abandons those left. */
  private async awaitJobs(): Promise<void> {
    if (this.active.size === 0) return;
    const drained = new Promise<void>((resolve) => {
      const check = () => (this.active.size === 0 ? resolve() : (this.slotFreed = check));
      check();
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<"grace">((r) => (timer = setTimeout(() => r("grace"), this.o.shutdownGraceMs)));
    const first = await Promise.race([drained, grace]);
    clearTimeout(timer);
    if (first === "grace") this.abandon();
  }

  /** Fails every job still running with "worker_shutdown" and aborts its signal; a late outcome is ignored. */
  private abandon(): void {
    this.closed = true;
    for (const job of [...this.active.values()]) {
      this.active.delete(job.id);
      if (job.claimed) continue;
      job.claimed = true;
      job.stop("worker_shutdown");
      this.track(this.fail(job, new Error("worker_shutdown"), "worker_shutdown"));
    }
  }

  private track(p: Promise<void>): void {
    this.reports.add(p);
    void p.finally(() => this.reports.delete(p));
  }

  private async process(fj: FetchedJob): Promise<void> {
    const job = new Job(fj, (j, v) => this.saveCheckpoint(j, v), () => this.stopping);
    job.usage = new PendingUsage();
    job.client = this.client.withTrace(job);
    if (this.closed) {
      job.claimed = true;
      this.track(this.fail(job, new Error("worker_shutdown"), "worker_shutdown"));
      return;
    }
    this.active.set(job.id, job);
    if (job.leaseDurationMs > 0 && job.leaseDurationMs / 3 < this.heartbeatEvery(false)) this.hbWake?.();
    let result: unknown;
    let error: unknown;
    let failed = false;
    try {
      // Enqueues anywhere within the handler continue the job's trace (its process span's, when recorded).
      result = await inProcessSpan(job, this.o.tracerProvider, (tc) => {
        job.client = this.client.withTrace(tc);
        return runInTrace(tc, () => this.handler(job));
      });
    } catch (err) {
      failed = true;
      error = err;
    }
    this.active.delete(job.id);
    this.slotFreed?.();
    if (job.claimed) return;
    job.claimed = true;
    if (job.signal.reason?.reason === "lease_lost") return; // another worker holds the job now
    if (job.signal.reason?.reason === "job_cancelled") {
      // The job stays active, marked cancelling, until its worker settles it or its lease runs
      // out: a fail settles it as cancelled at once and frees its place in the queue's caps.
      this.track(this.fail(job, new Error("job_cancelled"), "job_cancelled"));
      return;
    }
    this.track(failed ? this.fail(job, error) : this.ack(job, result));
  }

  private async ack(job: Job, result: unknown): Promise<void> {
    try {
      JSON.stringify(result);
    } catch (err) {
      return this.fail(job, err);
    }
    try {
      await this.client.ack(job.id, result === undefined ? undefined : result,
        { leaseToken: job.leaseToken, workerId: this.o.workerId, usage: job.usage?.take() });
    } catch (err) {
      this.o.logger.warn(`jobbie worker ${this.o.workerId}: ack of job ${job.id} failed: ${(err as Error).message}`);
    }
  }

  private async fail(job: Job, err: unknown, message?: string): Promise<void> {
    const d = describeError(err);
    try {
      await this.client.fail(job.id, message ?? d.message, message ? "" : d.backtrace,
        { leaseToken: job.leaseToken, workerId: this.o.workerId, nonRetryable: err instanceof NonRetryableError, usage: job.usage?.take() });
    } catch (e) {
      this.o.logger.warn(`jobbie worker ${this.o.workerId}: fail of job ${job.id} failed: ${(e as Error).message}`);
    }
  }

  private async saveCheckpoint(job: Job, value: unknown): Promise<void> {
    const ver = job.progressVer;
    const entry: HeartbeatEntry = { lease_token: job.leaseToken, checkpoint: value ?? null };
    if (job.progressValue) entry.progress = job.progressValue;
    const usage = job.usage?.take();
    if (usage) entry.usage = usage;
    let res: Record<string, HeartbeatStatus>;
    try {
      res = await this.client.heartbeat({ [job.id]: entry }, { workerId: this.o.workerId });
    } catch (err) {
      job.usage?.restore(usage);
      throw err;
    }
    if (job.progressVer === ver) job.progressValue = null;
    this.apply(job, res[job.id]);
  }

  private apply(job: Job, status: string | undefined): void {
    if (status === "cancel") job.stop("job_cancelled");
    else if (status === "lost") job.stop("lease_lost");
  }

  /** The configured interval, or a third of the shortest running lease if that is shorter. */
  private heartbeatEvery(withActive = true): number {
    let every = this.o.heartbeatIntervalMs ?? Math.min(15000, this.o.leaseDurationSec ? (this.o.leaseDurationSec * 1000) / 3 : 15000);
    if (withActive) {
      for (const j of this.active.values()) if (j.leaseDurationMs > 0) every = Math.min(every, j.leaseDurationMs / 3);
    }
    return every;
  }

  private async heartbeatLoop(): Promise<void> {
    let next = Date.now() + this.heartbeatEvery();
    while (!(this.stopping && this.active.size === 0)) {
      const woke = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), Math.max(0, next - Date.now()));
        this.hbWake = () => {
          clearTimeout(t);
          resolve(true);
        };
      });
      this.hbWake = null;
      if (woke) {
        next = Math.min(next, Date.now() + this.heartbeatEvery()); // only ever earlier
        continue;
      }
      await this.heartbeat();
      next = Date.now() + this.heartbeatEvery();
    }
  }

  private async heartbeat(): Promise<void> {
    const running = [...this.active.values()];
    if (running.length === 0) return;
    const jobs: Record<string, HeartbeatEntry> = {};
    const sent = new Map<Job, AIUsage>(); // given back to the jobs if the heartbeat fails
    const vers = running.map((j) => {
      const e: HeartbeatEntry = j.progressValue ? { lease_token: j.leaseToken, progress: j.progressValue } : { lease_token: j.leaseToken };
      const u = j.usage?.take();
      if (u) {
        e.usage = u;
        sent.set(j, u);
      }
      jobs[j.id] = e;
      return j.progressVer;
    });
    try {
      const res = await this.client.heartbeat(jobs, {
        workerId: this.o.workerId, retries: 0, timeoutMs: Math.max(this.heartbeatEvery(), MIN_HEARTBEAT_TIMEOUT_MS),
      });
      running.forEach((j, i) => {
        if (j.progressVer === vers[i]) j.progressValue = null;
        this.apply(j, res[j.id]);
      });
    } catch (err) {
      for (const [j, u] of sent) j.usage?.restore(u);
      this.o.logger.warn(`jobbie worker ${this.o.workerId}: heartbeat of ${running.length} jobs failed${isRetryable(err) ? " (retried next time)" : ""}: ${(err as Error).message}`);
    }
  }
}
