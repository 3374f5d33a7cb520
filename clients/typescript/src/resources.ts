// Resource families of one namespace: queues, schedules, search with
// cursors, bulk actions with progress, and batches.

import { JobbieError } from "./errors.js";
import { type CallOptions, Transport, sleep } from "./http.js";
import { parseSSE } from "./sse.js";
import type * as api from "./api.gen.js";
import type {
  Batch, BatchList, BulkAccepted, BulkOperation, BulkOperationList, BulkRequest, BulkResult, ClearResponse, DrainResponse,
  Duration, EnqueueResult, Page, Queue, QueueDefaults, QueueScale, QueueSpec, QueueStats, QueueStatsQuery, Schedule,
  SchedulePreview, ScheduleRequest, SearchJob, SearchPage, SearchRequest,
} from "./types.js";

const enc = encodeURIComponent;

async function get<T>(t: Transport, path: string, co?: CallOptions, query?: Record<string, string | number | undefined>): Promise<T> {
  return (await t.call<T>({ method: "GET", path, query }, co)).data;
}

async function post<T>(t: Transport, path: string, body?: unknown, co?: CallOptions, retry = false): Promise<T> {
  return (await t.call<T>({ method: "POST", path, body, retry }, co)).data;
}

/** Follows a cursor-paged list page by page. */
async function* pages<P extends Page>(first: (cursor?: string) => Promise<P>): AsyncGenerator<P> {
  let cursor: string | undefined;
  for (;;) {
    const p = await first(cursor);
    yield p;
    if (!p.has_more || !p.cursor) return;
    cursor = p.cursor;
  }
}

/** Queues: counts and settings (docs/api/queues.md). */
export class Queues {
  constructor(private readonly t: Transport) {}
  async list(co?: CallOptions): Promise<Queue[]> {
    return (await get<api.QueueList>(this.t, "/api/v1/queues", co)).queues ?? [];
  }
  get(name: string, co?: CallOptions): Promise<Queue> {
    return get(this.t, `/api/v1/queues/${enc(name)}`, co);
  }
  /** Creates the queue or replaces every setting, in one idempotent call. */
  async put(name: string, spec: QueueSpec, co?: CallOptions): Promise<Queue> {
    return (await this.t.call<Queue>({ method: "PUT", path: `/api/v1/queues/${enc(name)}`, body: spec, retry: true }, co)).data;
  }
  /** Deletes the queue and all its jobs. */
  async delete(name: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/queues/${enc(name)}`, query: { confirm: "true" } }, co);
  }
  pause(name: string, co?: CallOptions): Promise<Queue> { return post(this.t, `/api/v1/queues/${enc(name)}/pause`, undefined, co, true); }
  resume(name: string, co?: CallOptions): Promise<Queue> { return post(this.t, `/api/v1/queues/${enc(name)}/resume`, undefined, co, true); }
  /** Pauses; "drained": true once no job is active. */
  drain(name: string, co?: CallOptions): Promise<DrainResponse> {
    return post(this.t, `/api/v1/queues/${enc(name)}/drain`, undefined, co, true);
  }
  /** Deletes pending, scheduled and retrying jobs. */
  clear(name: string, co?: CallOptions): Promise<ClearResponse> { return post(this.t, `/api/v1/queues/${enc(name)}/clear`, undefined, co, true); }
  /**
   * The queue's history, a bucket per step over [from, to), oldest first
   * (docs/api/queues.md, "History"). A bad query is a 400 naming its field;
   * a queue the key cannot see is a 404.
   */
  async stats(name: string, q: QueueStatsQuery = {}, co?: CallOptions): Promise<QueueStats> {
    const time = (t: string | Date | undefined) => (t instanceof Date ? t.toISOString() : t);
    const s = await get<QueueStats>(this.t, `/api/v1/queues/${enc(name)}/stats`, co,
      { from: time(q.from), to: time(q.to), step: q.step });
    return { ...s, buckets: s.buckets ?? [] };
  }
  /** What an autoscaler sizes the queue's workers by, live: backlog, oldest pending age, in flight, demand (docs/api/queues.md, "Autoscaling"). */
  scale(name: string, co?: CallOptions): Promise<QueueScale> { return get(this.t, `/api/v1/queues/${enc(name)}/scale`, co); }
  /** At most max active jobs; null removes the cap. */
  setConcurrency(name: string, max: number | null, co?: CallOptions): Promise<Queue> {
    return post(this.t, `/api/v1/queues/${enc(name)}/concurrency`, { max }, co, true);
  }
  async removeConcurrency(name: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/queues/${enc(name)}/concurrency` }, co);
  }
  /** At most rate jobs per period. */
  setThrottle(name: string, rate: number, period: Duration, co?: CallOptions): Promise<Queue> {
    return post(this.t, `/api/v1/queues/${enc(name)}/throttle`, { rate, period }, co, true);
  }
  async removeThrottle(name: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/queues/${enc(name)}/throttle` }, co);
  }
  /** Defaults for the job fields a producer leaves out. */
  setDefaults(name: string, defaults: QueueDefaults, co?: CallOptions): Promise<Queue> {
    return post(this.t, `/api/v1/queues/${enc(name)}/defaults`, defaults, co, true);
  }
}

/** Cron schedules (docs/api/schedules.md). */
export class Schedules {
  constructor(private readonly t: Transport) {}
  async list(co?: CallOptions): Promise<Schedule[]> {
    return (await get<api.ScheduleList>(this.t, "/api/v1/schedules", co)).schedules ?? [];
  }
  create(req: ScheduleRequest, co?: CallOptions): Promise<Schedule> { return post(this.t, "/api/v1/schedules", req, co); }
  /** By id, or by name (409 ambiguous_name when the name is in several queues). */
  get(idOrName: string, co?: CallOptions): Promise<Schedule> { return get(this.t, `/api/v1/schedules/${enc(idOrName)}`, co); }
  /** Replaces every field. */
  async update(id: string, req: ScheduleRequest, co?: CallOptions): Promise<Schedule> {
    return (await this.t.call<Schedule>({ method: "PUT", path: `/api/v1/schedules/${enc(id)}`, body: req }, co)).data;
  }
  async delete(id: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/schedules/${enc(id)}` }, co);
  }
  enable(id: string, co?: CallOptions): Promise<Schedule> { return post(this.t, `/api/v1/schedules/${enc(id)}/enable`, undefined, co, true); }
  disable(id: string, co?: CallOptions): Promise<Schedule> { return post(this.t, `/api/v1/schedules/${enc(id)}/disable`, undefined, co, true); }
  /** Enqueues the schedule's job now. */
  run(id: string, co?: CallOptions): Promise<EnqueueResult> { return post(this.t, `/api/v1/schedules/${enc(id)}/run`, undefined, co); }
  /** The next runs of a cron in a time zone; nothing stored. */
  preview(cron: string, timezone?: string, count?: number, co?: CallOptions): Promise<SchedulePreview> {
    return post(this.t, "/api/v1/schedules/preview", { cron, timezone, count }, co, true);
  }
}

/** Job search, newest first, paged by cursor (docs/search.md). */
export class Search {
  constructor(private readonly t: Transport) {}
  /** One page. */
  page(req: SearchRequest = {}, co?: CallOptions): Promise<SearchPage> {
    return post(this.t, "/api/v1/jobs/search", req, co, true);
  }
  /** Every page, following the cursor. */
  pages(req: SearchRequest = {}, co?: CallOptions): AsyncGenerator<SearchPage> {
    return pages((cursor) => this.page({ ...req, cursor: cursor ?? req.cursor }, co));
  }
  /** Every matching job, page after page: `for await (const job of client.search.jobs({queue}))`. */
  async *jobs(req: SearchRequest = {}, co?: CallOptions): AsyncGenerator<SearchJob> {
    for await (const p of this.pages(req, co)) yield* p.jobs ?? [];
  }
}

/** Bulk actions over jobs by id or by filter (docs/api/search-and-bulk.md). */
export class Bulk {
  constructor(private readonly t: Transport) {}
  /**
   * Starts a bulk action: done at once (BulkResult), or, over 10,000
   * matches, accepted to run in the background (BulkAccepted).
   */
  start(req: BulkRequest, co?: CallOptions): Promise<BulkResult | BulkAccepted> {
    return post(this.t, "/api/v1/jobs/bulk", req, co);
  }
  /**
   * Runs a bulk action to its end: a background operation is followed
   * on its progress stream, calling onProgress with each update.
   */
  async run(req: BulkRequest, onProgress?: (op: BulkOperation) => void, co?: CallOptions): Promise<BulkResult | BulkOperation> {
    const r = await this.start(req, co);
    if (!("bulk_operation_id" in r)) return r;
    return this.watch(r.bulk_operation_id, onProgress, co);
  }
  get(id: string, co?: CallOptions): Promise<BulkOperation> { return get(this.t, `/api/v1/bulk/${enc(id)}`, co); }
  /** One page of background operations, newest first. */
  list(q: { limit?: number; cursor?: string } = {}, co?: CallOptions): Promise<BulkOperationList> {
    return get(this.t, "/api/v1/bulk", co, q);
  }
  /** Cancels a background operation after the step in flight. */
  async cancel(id: string, co?: CallOptions): Promise<BulkOperation> {
    return (await this.t.call<BulkOperation>({ method: "DELETE", path: `/api/v1/bulk/${enc(id)}` }, co)).data;
  }
  /** The operation's progress as it happens, ending with it (the stream's done event). */
  async *progress(id: string, co?: CallOptions): AsyncGenerator<BulkOperation> {
    const a = await this.t.call<undefined>({ method: "GET", path: `/api/v1/bulk/${enc(id)}/progress`, stream: true }, co);
    for await (const m of parseSSE(a.response.body!, co?.signal)) {
      if (m.event === "progress" || m.event === "done") {
        if (m.data) yield JSON.parse(m.data) as BulkOperation;
        if (m.event === "done") return;
      }
    }
  }
  /**
   * Follows the operation until it is done; a stream that breaks early
   * is reopened, and the final state is read back.
   */
  async watch(id: string, onProgress?: (op: BulkOperation) => void, co?: CallOptions): Promise<BulkOperation> {
    const bo = this.t.backoff();
    for (;;) {
      try {
        for await (const op of this.progress(id, co)) onProgress?.(op);
      } catch (err) {
        if (co?.signal?.aborted || (err instanceof JobbieError && !err.retryable)) throw err;
      }
      const op = await this.get(id, co);
      if (op.status !== "processing") return op;
      if (!(await sleep(bo.next(), co?.signal))) throw co?.signal?.reason;
    }
  }
}

/** Batches: their counts and callbacks. */
export class Batches {
  constructor(private readonly t: Transport) {}
  get(id: string, co?: CallOptions): Promise<Batch> { return get(this.t, `/api/v1/batches/${enc(id)}`, co); }
  /** One page of the namespace's batches, newest first. */
  page(q: { limit?: number; cursor?: string } = {}, co?: CallOptions): Promise<BatchList> {
    return get(this.t, "/api/v1/batches", co, q);
  }
  /** Every batch, following the cursor. */
  async *all(q: { limit?: number } = {}, co?: CallOptions): AsyncGenerator<Batch> {
    for await (const p of pages((cursor) => this.page({ ...q, cursor }, co))) yield* p.batches ?? [];
  }
}
