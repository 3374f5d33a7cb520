// A running job as its handler sees it, pulled by a Worker or pushed to a
// push handler, and the reasons a job's signal aborts.

import { type AIUsage, checkUsage, PendingUsage } from "./ai.js";
import type { Client } from "./client.js";
import type { FetchedJob, Progress } from "./types.js";

/** The handler's return value acks the job as its result; a throw fails the attempt. */
export type Handler = (job: Job) => unknown | Promise<unknown>;

/** Thrown by a handler, fails the attempt as non-retryable: the job is dead at once (dead_reason "non_retryable"). */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}

/** Why a job's signal aborted (job.signal.reason). */
export class JobStopped extends Error {
  constructor(readonly reason: "job_cancelled" | "lease_lost" | "worker_shutdown" | "delivery_aborted", message: string) {
    super(message);
    this.name = "JobStopped";
  }
}

/** The server cancelled the job; the worker settles it as cancelled at once. */
export const JOB_CANCELLED = "job_cancelled";
/** The job is no longer leased to this worker; nothing is reported for it. */
export const LEASE_LOST = "lease_lost";
/** The worker stopped waiting for the job; it is failed with "worker_shutdown". */
export const WORKER_SHUTDOWN = "worker_shutdown";
/** A pushed job's delivery request ended before its handler answered. */
export const DELIVERY_ABORTED = "delivery_aborted";

const messages = {
  job_cancelled: "job cancelled",
  lease_lost: "job lease lost",
  worker_shutdown: "worker_shutdown",
  delivery_aborted: "push delivery aborted",
} as const;

export function stopReason(r: keyof typeof messages): JobStopped {
  return new JobStopped(r, messages[r]);
}

/** Saves a checkpoint: through a heartbeat for a pulled job, in the answer for a pushed one. */
export type Checkpointer = (job: Job, value: unknown) => Promise<void>;

export class Job {
  readonly id: string;
  readonly queue: string;
  readonly payload: unknown;
  readonly attempt: number;
  readonly maxRetries: number;
  readonly tags: Record<string, string>;
  /** What an earlier attempt saved with checkpoint(), or null: resume from it. */
  readonly lastCheckpoint: unknown;
  /** The lease in ms; a pushed job's is the time the dispatcher waits for the answer. */
  readonly leaseDurationMs: number;
  /** Names this lease (empty for a pushed job); ack, fail and heartbeats send it. */
  readonly leaseToken: string;
  /** The job's W3C trace context, as it was enqueued. */
  readonly traceparent?: string;
  readonly tracestate?: string;
  /**
   * The Worker's client (a push handler's, if given one) whose enqueues
   * continue this job's trace: the explicit way where the platform has
   * no AsyncLocalStorage. Undefined for a push handler given no client.
   */
  client?: Client;
  /** Aborts when the job should stop; its reason is a JobStopped. */
  readonly signal: AbortSignal;

  /** @internal */ readonly ctl: AbortController;
  /** @internal */ progressValue: Progress | null = null;
  /** @internal */ progressVer = 0;
  /** @internal */ checkpointValue: unknown = undefined;
  /** @internal */ claimed = false;
  /** @internal Usage reported and not yet sent; undefined for a pushed job. */
  usage: PendingUsage | undefined;

  constructor(j: FetchedJob, private readonly saver: Checkpointer, private readonly shuttingDown: () => boolean = () => false) {
    this.id = j.job_id;
    this.queue = j.queue;
    this.payload = j.payload;
    this.attempt = j.attempt;
    this.maxRetries = j.max_retries;
    this.tags = j.tags ?? {};
    this.lastCheckpoint = j.checkpoint ?? null;
    this.leaseDurationMs = (j.lease_duration ?? 0) * 1000;
    this.leaseToken = j.lease_token ?? "";
    if (j.traceparent) this.traceparent = j.traceparent;
    if (j.tracestate) this.tracestate = j.tracestate;
    this.ctl = new AbortController();
    this.signal = this.ctl.signal;
  }

  /**
   * Adds a model call's usage to what the job reports: sent, summed
   * exactly, with the job's next heartbeat or its ack or fail. A bad
   * value throws a TypeError naming the field, as the server would
   * refuse it; a pushed job's answer carries no usage (it throws).
   */
  reportUsage(u: AIUsage): void {
    const c = checkUsage(u);
    if (!this.usage) throw new Error(`jobbie: job ${this.id} was pushed: its answer carries no usage`);
    this.usage.add(c);
  }

  /** Records progress; the next heartbeat reports it (a pushed job's answer does). */
  progress(current: number, total: number, message?: string): void {
    this.progressValue = message === undefined ? { current, total } : { current, total, message };
    this.progressVer++;
  }

  /**
   * Stores value (any JSON) now, so a later attempt starts with it in
   * lastCheckpoint; a pulled job's lease is extended with it.
   */
  checkpoint(value: unknown): Promise<void> {
    return this.saver(this, value);
  }

  /** Whether the job should stop: cancelled, lease lost, or the worker shutting down. */
  get cancelled(): boolean {
    return this.signal.aborted || this.shuttingDown();
  }

  /** Throws the signal's reason if the job should stop: call it between steps. */
  throwIfCancelled(): void {
    if (this.signal.aborted) throw this.signal.reason;
    if (this.shuttingDown()) throw stopReason("worker_shutdown");
  }

  /** @internal Aborts the job's signal with reason, the first time only. */
  stop(r: "job_cancelled" | "lease_lost" | "worker_shutdown" | "delivery_aborted"): void {
    if (this.signal.aborted) return;
    this.ctl.abort(stopReason(r));
  }
}

/** The message and backtrace an attempt is failed with. */
export function describeError(err: unknown): { message: string; backtrace: string } {
  if (err instanceof Error) {
    const message = err.message ? `${err.name}: ${err.message}` : err.name;
    return { message, backtrace: err.stack ?? "" };
  }
  let message: string;
  try {
    message = typeof err === "string" ? err : JSON.stringify(err) ?? String(err);
  } catch {
    message = String(err);
  }
  return { message: message || "error", backtrace: "" };
}
