// The Client: jobs (enqueue, batch, get, cancel, retry, move, delete,
// dead, chains), the worker protocol (fetch, ack, fail, heartbeat), the
// event stream with resume, and the resource families of resources.ts,
// admin.ts and observe.ts.

import { Admin } from "./admin.js";
import { AI, type AIUsage } from "./ai.js";
import { JobbieError, WORKER_DRAIN_HEADER, WorkerDrainingError } from "./errors.js";
import { type CallOptions, type ClientOptions, Transport, marked, sleep } from "./http.js";
import { Alerts, Audit } from "./observe.js";
import { Batches, Bulk, Queues, Schedules, Search } from "./resources.js";
import { parseSSE } from "./sse.js";
import { checkContext, checkEnqueue, currentTrace, ownTrace, type TraceContext, traceHeaders } from "./trace.js";
import type * as api from "./api.gen.js";
import type {
  AckBatchEntry, AckBatchResult, BatchEnqueueResult, BatchOptions, BatchSpec, ChainView, ClusterHealth, DeadPage,
  EnqueueOptions, EnqueueRequest, EnqueueResult, FailResult, FetchBatchRequest, FetchedJob, FetchRequest, HeartbeatEntry,
  HeartbeatStatus, JobDetail, JobEvent, JobOpResult, StatusResponse, Worker, WorkerDrainResponse,
} from "./types.js";
import type { Encryption, EncryptionRequest } from "./types-admin.js";

const enc = encodeURIComponent;

/** Options of a fetch: the server's long-poll wait and the call's own. */
export interface FetchOptions extends CallOptions {}

/** Options of an ack or fail. */
export interface ReportOptions extends CallOptions {
  /** The fetched job's lease_token: the call applies to that lease only. */
  leaseToken?: string;
  /** The worker id the job was fetched with. */
  workerId?: string;
  /** Model usage to add to the job's (docs/api/ai.md). */
  usage?: AIUsage;
}

/** Options of a fail. */
export interface FailOptions extends ReportOptions {
  /** The job is dead at once (reason "non_retryable"), whatever retries remain. */
  nonRetryable?: boolean;
}

/** Options of the event stream. */
export interface EventsOptions {
  /** Resume after this event id (Last-Event-ID). */
  lastEventId?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Reopen a stream that broke, from the last id seen. Default true. */
  reconnect?: boolean;
  /** Called each time the stream is open (its answer's headers arrived), the first and after each reconnect. */
  onOpen?: () => void;
  /** Called with "events were missed" and other comment lines of the server. */
  onComment?: (text: string) => void;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function enqueueBody(req: EnqueueRequest & { inheritTrace?: boolean }): Record<string, unknown> {
  const b: Record<string, unknown> = withoutUndefined({ ...req, inheritTrace: undefined });
  if (req.scheduled_at instanceof Date) b.scheduled_at = req.scheduled_at.toISOString();
  return b;
}

/** A client of one tenant's API key, in one namespace. */
export class Client {
  readonly t: Transport;
  readonly queues: Queues;
  readonly schedules: Schedules;
  readonly search: Search;
  readonly bulk: Bulk;
  readonly batches: Batches;
  readonly admin: Admin;
  readonly alerts: Alerts;
  readonly audit: Audit;
  /** AI workloads: usage, budgets, approving and rejecting held jobs. */
  readonly ai: AI;
  /** The trace this client's enqueues continue (withTrace), before the handler's of the async context. */
  readonly trace?: TraceContext;

  constructor(opts: ClientOptions | Transport, trace?: Partial<TraceContext>) {
    this.t = opts instanceof Transport ? opts : new Transport(opts);
    const tc = ownTrace(trace);
    if (tc) {
      checkContext(tc);
      this.trace = tc;
    }
    this.queues = new Queues(this.t);
    this.schedules = new Schedules(this.t);
    this.search = new Search(this.t);
    this.bulk = new Bulk(this.t);
    this.batches = new Batches(this.t);
    this.admin = new Admin(this.t);
    this.alerts = new Alerts(this.t);
    this.audit = new Audit(this.t);
    this.ai = new AI(this.t);
  }

  /** This client in another namespace of the same key. */
  inNamespace(namespace: string): Client {
    return new Client(this.t.withNamespace(namespace), this.trace);
  }

  /**
   * This client, whose enqueues naming no traceparent continue tc (a
   * job's: a Worker gives its handler job.client, this client with the
   * job's trace). A bad tc throws a 400 JobbieError naming its field.
   */
  withTrace(tc: Partial<TraceContext> | undefined): Client {
    return new Client(this.t, tc);
  }

  /** The trace an enqueue continues: its own client's, else the running handler's; none when told not to. */
  private inherited(inherit: boolean | undefined): Record<string, string> {
    return inherit === false ? {} : traceHeaders(this.trace ?? currentTrace());
  }

  // Aliases of the admin families, so the common ones read short.
  get namespaces() { return this.admin.namespaces; }
  get keys() { return this.admin.keys; }
  get roles() { return this.admin.roles; }
  get backups() { return this.admin.backups; }
  get usage() { return this.admin.usage; }
  get webhooks() { return this.admin.webhooks; }
  get signingKeys() { return this.admin.signingKeys; }

  // ---- producing

  /**
   * Enqueues one job. 201 for a new job; a unique_key matching an
   * unfinished job answers that job (unique_existing). Every call carries
   * an Idempotency-Key of its own, the same on each of its retries, so a
   * retry after a lost answer gets the first answer back (replayed)
   * rather than enqueueing again.
   *
   * A job naming no traceparent continues the trace of the handler it is
   * enqueued from (opts.inheritTrace false: none). A bad traceparent or
   * tracestate, of the job or a chain step, throws a 400 JobbieError
   * naming it before anything is sent.
   */
  async enqueue(queue: string, payload?: unknown, opts: EnqueueOptions = {}, co?: CallOptions): Promise<EnqueueResult> {
    checkEnqueue(opts);
    const headers = opts.traceparent ? {} : this.inherited(opts.inheritTrace);
    const a = await this.t.call<api.EnqueueResponse>(
      { method: "POST", path: "/api/v1/enqueue", body: enqueueBody({ ...opts, queue, payload }), headers }, co);
    return marked(a);
  }

  /**
   * Enqueues up to 1,000 jobs, all or none; with batch, a callback when
   * all are done. Trace context as enqueue's, for each job and the
   * callback (a bad one named as jobs[3].traceparent, batch.tracestate).
   */
  async enqueueBatch(jobs: EnqueueRequest[], batch?: BatchSpec, co: BatchOptions = {}): Promise<BatchEnqueueResult> {
    jobs.forEach((j, i) => checkEnqueue(j, `jobs[${i}].`));
    checkContext(batch, "batch.");
    const { inheritTrace, ...call } = co;
    const a = await this.t.call<api.BatchResponse>({
      method: "POST", path: "/api/v1/enqueue/batch",
      body: withoutUndefined({ jobs: jobs.map(enqueueBody), batch }), headers: this.inherited(inheritTrace),
    }, call);
    return marked(a);
  }

  // ---- jobs

  /** Everything about a job: state, attempts, errors, progress, result, timeline. */
  async getJob(id: string, co?: CallOptions): Promise<JobDetail> {
    return (await this.t.call<JobDetail>({ method: "GET", path: `/api/v1/jobs/${enc(id)}` }, co)).data;
  }

  /** Cancels a job: "cancelled", or "cancelling" for a running one (its worker's next heartbeat stops it). */
  async cancelJob(id: string, co?: CallOptions): Promise<StatusResponse> {
    return (await this.t.call<StatusResponse>({ method: "POST", path: `/api/v1/jobs/${enc(id)}/cancel`, retry: true }, co)).data;
  }

  /** Retries a dead, cancelled or completed job. */
  async retryJob(id: string, co?: CallOptions): Promise<JobOpResult> {
    return (await this.t.call<JobOpResult>({ method: "POST", path: `/api/v1/jobs/${enc(id)}/retry` }, co)).data;
  }

  /** Moves a job to another queue. */
  async moveJob(id: string, queue: string, co?: CallOptions): Promise<JobOpResult> {
    return (await this.t.call<JobOpResult>({ method: "POST", path: `/api/v1/jobs/${enc(id)}/move`, body: { queue } }, co)).data;
  }

  /** Deletes a job. */
  async deleteJob(id: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/jobs/${enc(id)}` }, co);
  }

  /** The chain a job is a step of: every step in order. */
  async getChain(jobId: string, co?: CallOptions): Promise<ChainView> {
    return (await this.t.call<ChainView>({ method: "GET", path: `/api/v1/jobs/${enc(jobId)}/chain` }, co)).data;
  }

  /** One page of dead jobs, newest first. */
  async deadJobs(q: { queue?: string; limit?: number; cursor?: string } = {}, co?: CallOptions): Promise<DeadPage> {
    return (await this.t.call<DeadPage>({ method: "GET", path: "/api/v1/dead", query: q }, co)).data;
  }

  // ---- the worker protocol (the Worker runtime uses these)

  /** Long-polls for one job; null when the wait ended with none (204). */
  async fetch(req: FetchRequest, co: FetchOptions = {}): Promise<FetchedJob | null> {
    const a = await this.t.call<FetchedJob>({ method: "POST", path: "/api/v1/fetch", body: req },
      { retries: 0, timeoutMs: ((req.timeout ?? 60) + 30) * 1000, ...co });
    if (a.headers.get(WORKER_DRAIN_HEADER) === "true") throw new WorkerDrainingError(req.worker_id);
    return a.status === 204 ? null : a.data;
  }

  /** Long-polls for up to max jobs (1-1000); empty when the wait ended with none. */
  async fetchBatch(req: FetchBatchRequest, co: FetchOptions = {}): Promise<FetchedJob[]> {
    const a = await this.t.call<api.FetchBatchResponse>({ method: "POST", path: "/api/v1/fetch/batch", body: req },
      { retries: 0, timeoutMs: ((req.timeout ?? 60) + 30) * 1000, ...co });
    if (a.headers.get(WORKER_DRAIN_HEADER) === "true") throw new WorkerDrainingError(req.worker_id);
    return a.data?.jobs ?? [];
  }

  /** Completes a job with its result. */
  async ack(id: string, result?: unknown, opts: ReportOptions & { stepStatus?: api.AckRequest["step_status"] } = {}): Promise<StatusResponse> {
    const body = withoutUndefined({ result, lease_token: opts.leaseToken, worker_id: opts.workerId, step_status: opts.stepStatus, usage: opts.usage });
    return (await this.t.call<StatusResponse>({ method: "POST", path: `/api/v1/ack/${enc(id)}`, body, retry: true }, opts)).data;
  }

  /** Acks many jobs in one call (up to 1000); each entry has its own outcome. */
  async ackBatch(acks: AckBatchEntry[], opts: { workerId?: string } & CallOptions = {}): Promise<AckBatchResult[]> {
    const body = withoutUndefined({ acks, worker_id: opts.workerId });
    return (await this.t.call<api.AckBatchResponse>({ method: "POST", path: "/api/v1/ack/batch", body, retry: true }, opts)).data.results ?? [];
  }

  /** Fails the attempt; the server retries with backoff or moves the job to dead (at once with nonRetryable). */
  async fail(id: string, error: string, backtrace?: string, opts: FailOptions = {}): Promise<FailResult> {
    const body = withoutUndefined({ error, backtrace: backtrace || undefined, lease_token: opts.leaseToken, worker_id: opts.workerId,
      non_retryable: opts.nonRetryable || undefined, usage: opts.usage });
    return (await this.t.call<FailResult>({ method: "POST", path: `/api/v1/fail/${enc(id)}`, body, retry: true }, opts)).data;
  }

  /** Extends the leases of many jobs with their progress and checkpoints; a status per job. */
  async heartbeat(jobs: Record<string, HeartbeatEntry>, opts: { workerId?: string } & CallOptions = {}): Promise<Record<string, HeartbeatStatus>> {
    const body = withoutUndefined({ jobs, worker_id: opts.workerId });
    const a = await this.t.call<api.HeartbeatResponse>({ method: "POST", path: "/api/v1/heartbeat", body, retry: true }, opts);
    return Object.fromEntries(Object.entries(a.data.jobs ?? {}).map(([id, s]) => [id, s.status as HeartbeatStatus]));
  }

  // ---- workers, cluster, events

  /** Every worker seen in the namespace. */
  async workers(co?: CallOptions): Promise<Worker[]> {
    return (await this.t.call<api.WorkerList>({ method: "GET", path: "/api/v1/workers" }, co)).data.workers ?? [];
  }

  /** Asks a worker to stop taking jobs: its fetches get none from then on; a Worker under that id finishes what it holds. */
  async drainWorker(id: string, co?: CallOptions): Promise<WorkerDrainResponse> {
    return (await this.t.call<WorkerDrainResponse>({ method: "POST", path: `/api/v1/workers/${enc(id)}/drain` }, co)).data;
  }

  /** The namespace's OTLP endpoint (docs/api/namespaces.md): where its jobs' spans are sent, "" for nowhere. */
  async getTracing(co?: CallOptions): Promise<string> {
    return (await this.t.call<api.NamespaceTracing>({ method: "GET", path: "/api/v1/tracing" }, co)).data.otlp_endpoint;
  }

  /** Sets the namespace's OTLP endpoint (an https OTLP/HTTP traces URL), or removes it (null or ""); the answer is it as kept. */
  async setTracing(endpoint: string | null, co?: CallOptions): Promise<string> {
    const body: api.NamespaceTracingRequest = { otlp_endpoint: endpoint || null };
    return (await this.t.call<api.NamespaceTracing>({ method: "PUT", path: "/api/v1/tracing", body }, co)).data.otlp_endpoint;
  }

  /** The namespace's encryption at rest (docs/api/encryption.md): never a key; tenant_key_id names the tenant's in use. */
  async getEncryption(co?: CallOptions): Promise<Encryption> {
    return (await this.t.call<Encryption>({ method: "GET", path: "/api/v1/encryption" }, co)).data;
  }

  /**
   * Changes the namespace's encryption at rest (the owner's key alone); fields left out keep their value. tenant_key
   * (32 random bytes, base64 or hex) is sent, never answered back: the first wraps the namespace's keys in place of
   * the operator's, a later one rotates it. revoke_tenant_key makes everything sealed under it unreadable, for good
   * (reads then fail isEncryptionKeyRevoked).
   */
  async setEncryption(req: EncryptionRequest, co?: CallOptions): Promise<Encryption> {
    return (await this.t.call<Encryption>({ method: "PUT", path: "/api/v1/encryption", body: req }, co)).data;
  }

  /** The namespace's shard: leader, health and nodes. */
  async cluster(co?: CallOptions): Promise<ClusterHealth> {
    return (await this.t.call<ClusterHealth>({ method: "GET", path: "/api/v1/cluster" }, co)).data;
  }

  /**
   * The namespace's job events as they happen: from when the stream
   * opens (onOpen), or after opts.lastEventId. Each event's id resumes
   * the stream after it (opts.lastEventId); a stream that breaks is
   * reopened from the last id seen, so none is missed or repeated
   * (within the namespace's event retention; the server says
   * "events were missed" through onComment otherwise). Ends when
   * opts.signal aborts.
   */
  async *events(opts: EventsOptions = {}): AsyncGenerator<JobEvent> {
    let last = opts.lastEventId;
    const bo = this.t.backoff();
    while (!opts.signal?.aborted) {
      try {
        const a = await this.t.call<undefined>({
          method: "GET", path: "/api/v1/events", stream: true,
          headers: last ? { "Last-Event-ID": last } : {},
        }, { signal: opts.signal });
        bo.reset();
        opts.onOpen?.();
        for await (const m of parseSSE(a.response.body!, opts.signal)) {
          if (m.event === "comment") {
            if (m.comment) opts.onComment?.(m.comment);
            continue;
          }
          last = m.id || last;
          yield { ...(JSON.parse(m.data) as api.Event), id: m.id };
        }
      } catch (err) {
        if (opts.signal?.aborted) return;
        if (opts.reconnect === false || !(err instanceof JobbieError ? err.retryable : true)) throw err;
      }
      if (opts.reconnect === false) return;
      if (!(await sleep(bo.next(), opts.signal))) return;
    }
  }
}

