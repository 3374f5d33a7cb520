// The API's JSON shapes, written by hand from the server's wire package
// (wire/*.go). Times are RFC 3339 strings; a Duration is a "5s"-style
// string or a number of seconds.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Duration = string | number;
export type Priority = "critical" | "high" | "normal";
export type JobState = "pending" | "scheduled" | "held" | "active" | "retrying" | "completed" | "dead" | "cancelled";

/** A chain step, an on_failure or on_exit handler (wire.StepSpec). */
export interface StepSpec {
  queue: string;
  payload?: unknown;
  priority?: Priority;
  max_retries?: number;
  retry_backoff?: "none" | "fixed" | "linear" | "exponential";
  retry_base_delay?: Duration;
  retry_max_delay?: Duration;
  expire_after?: Duration;
  lease_duration?: Duration;
  tags?: Record<string, string>;
  traceparent?: string;
  tracestate?: string;
}

export interface ChainSpec {
  steps: Array<Partial<StepSpec>>;
  on_failure?: StepSpec;
  on_exit?: StepSpec;
}

/** Enqueue options (docs/api/jobs.md, "Enqueue options"). */
export interface EnqueueOptions extends Omit<StepSpec, "queue" | "payload"> {
  /** RFC 3339 time or a Date. */
  scheduled_at?: string | Date;
  unique_key?: string;
  /** Seconds. */
  unique_period?: number;
  chain?: ChainSpec;
  depends_on?: string[];
  on_dependency_failure?: "cancel" | "run";
  concurrency_key?: string;
  fairness_key?: string;
}

/** One job of enqueue/batch (wire.EnqueueRequest). */
export interface EnqueueRequest extends EnqueueOptions {
  queue: string;
  payload?: unknown;
}

export interface EnqueueResult {
  job_id: string;
  status: string;
  unique_existing: boolean;
  /** The answer of an earlier send of this call, given back (Idempotency-Replayed). */
  replayed?: boolean;
}

export interface BatchSpec {
  callback_queue: string;
  callback_payload?: unknown;
  traceparent?: string;
  tracestate?: string;
}

export interface BatchEnqueueResult {
  job_ids: string[];
  batch_id?: string;
  jobs: EnqueueResult[];
  /** The answer of an earlier send of this call, given back (Idempotency-Replayed). */
  replayed?: boolean;
}

/** A job handed to a worker (wire.FetchedJob). */
export interface FetchedJob {
  job_id: string;
  queue: string;
  payload: unknown;
  attempt: number;
  max_retries: number;
  /** Seconds. */
  lease_duration: number;
  checkpoint: unknown;
  tags: Record<string, string> | null;
  lease_token: string;
  traceparent?: string;
  tracestate?: string;
}

export interface FetchRequest {
  queues: string[];
  worker_id?: string;
  hostname?: string;
  /** Seconds the server may hold the long-poll (0-60; default 30). */
  timeout?: number;
  /** Seconds of lease asked for. */
  lease_duration?: number;
}

export interface Progress {
  current: number;
  total: number;
  message?: string;
}

export interface HeartbeatEntry {
  progress?: unknown;
  checkpoint?: unknown;
  lease_token?: string;
}

export type HeartbeatStatus = "ok" | "cancel" | "lost";

export interface FailResult {
  status: "retrying" | "pending" | "dead" | "cancelled";
  next_attempt_at?: string;
  attempts_remaining: number;
  reason?: string;
}

export interface AckBatchEntry {
  job_id: string;
  result?: unknown;
  step_status?: "continue" | "exit";
  lease_token?: string;
}

export interface AckBatchResult {
  job_id: string;
  status?: string;
  error?: { code: string; message: string };
}

export interface JobError {
  attempt: number;
  error: string;
  backtrace?: string;
  at: string;
}

/** GET /api/v1/jobs/{id} (wire.JobDetail). */
export interface JobDetail {
  id: string;
  queue: string;
  payload: unknown;
  state: JobState;
  priority: Priority;
  attempt: number;
  max_retries: number;
  retry_backoff: string;
  retry_base_delay: string;
  retry_max_delay: string;
  created_at: string | null;
  scheduled_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
  next_attempt_at: string | null;
  lease_expires_at: string | null;
  expire_after: string | null;
  expires_at: string | null;
  lease_duration?: string;
  unique_key: string | null;
  unique_period: number | null;
  concurrency_key?: string;
  fairness_key?: string;
  traceparent?: string;
  tracestate?: string;
  batch_id: string | null;
  chain_id: string | null;
  chain_step: number | null;
  depends_on?: string[];
  cancel_reason?: string;
  tags: Record<string, string> | null;
  progress: unknown;
  checkpoint: unknown;
  result: unknown;
  errors: JobError[] | null;
  worker: { id: string; hostname: string } | null;
  dead_reason?: string;
  updated_at: string | null;
  cancelling?: boolean;
  cancelled_at?: string;
  died_at?: string;
  timeline: Array<{ at: string; event: string; detail?: string }> | null;
}

export interface JobOpResult {
  job_id: string;
  status: string;
  queue?: string;
}

export interface DeadJob {
  id: string;
  queue: string;
  state: string;
  payload: unknown;
  created_at: string | null;
  died_at: string | null;
  attempt: number;
  max_retries: number;
  dead_reason: string;
  last_error: string | null;
  tags: Record<string, string> | null;
}

/** A page of a cursor-paged list. */
export interface Page {
  cursor: string | null;
  has_more: boolean;
}

export interface Batch {
  id: string;
  total: number;
  pending: number;
  succeeded: number;
  failed: number;
  callback_queue: string;
  callback_job_id: string | null;
  callback_state: string | null;
  created_at: string | null;
  completed_at: string | null;
}

export interface ChainStepView {
  step: number;
  queue: string;
  job_id: string | null;
  job_queue: string | null;
  state: string | null;
  created_at?: string | null;
  completed_at?: string | null;
}

export interface ChainView {
  chain_id: string;
  step: number;
  steps: ChainStepView[];
  on_failure_queue: string | null;
  on_exit_queue: string | null;
}

/** Search filters (docs/search.md); every one combines with AND. */
export interface SearchFilter {
  queue?: string;
  state?: JobState[];
  priority?: Priority;
  tags?: Record<string, string>;
  payload_contains?: string;
  payload_jq?: string;
  created_after?: string;
  created_before?: string;
  scheduled_after?: string;
  scheduled_before?: string;
  started_after?: string;
  started_before?: string;
  completed_after?: string;
  completed_before?: string;
  expire_after?: string;
  expire_before?: string;
  worker_id?: string;
  has_errors?: boolean;
  error_contains?: string;
  batch_id?: string;
  unique_key?: string;
  concurrency_key?: string;
  fairness_key?: string;
  attempt_min?: number;
  attempt_max?: number;
  job_id_prefix?: string;
}

export interface SearchRequest extends SearchFilter {
  sort?: string;
  order?: "asc" | "desc";
  cursor?: string;
  limit?: number;
}

export interface SearchJob {
  id: string;
  queue: string;
  state: JobState;
  priority: string;
  payload?: unknown;
  attempt: number;
  last_error?: string;
  [k: string]: unknown;
}

export interface SearchPage extends Page {
  jobs: SearchJob[];
  total: number;
  total_exact: boolean;
  duration_ms: number;
  partial: boolean;
}

export type BulkAction = "retry" | "delete" | "cancel" | "move" | "requeue" | "change_priority";

export interface BulkRequest {
  job_ids?: string[];
  filter?: SearchFilter;
  action: BulkAction;
  move_to_queue?: string;
  priority?: Priority;
}

/** A bulk action done at once. */
export interface BulkResult {
  affected: number;
  skipped: number;
  errors: number;
  failures: Array<{ job_id: string; error: string }>;
  duration_ms: number;
}

/** A bulk action over 10,000 jobs, run in the background. */
export interface BulkAccepted {
  bulk_operation_id: string;
  status: string;
  estimated_total: number;
  progress_url: string;
}

export interface BulkOperation {
  id: string;
  action: string;
  status: "processing" | "completed" | "cancelled";
  total: number;
  processed: number;
  affected: number;
  skipped: number;
  errors: number;
  created_at: string | null;
  finished_at: string | null;
  progress_url: string;
}

export interface ScheduleRequest {
  name: string;
  queue: string;
  cron: string;
  timezone?: string;
  payload?: unknown;
  priority?: Priority;
  unique_key?: string;
  max_retries?: number;
  enabled?: boolean;
}

export interface Schedule {
  id: string;
  name: string;
  queue: string;
  cron: string;
  timezone: string;
  payload: unknown;
  priority: string;
  unique_key: string | null;
  max_retries: number;
  enabled: boolean;
  next_run: string | null;
  last_run: string | null;
  last_job_id: string | null;
  created_at: string | null;
  updated_at: string | null;
  max_retries_default: boolean;
}

export interface SchedulePreview {
  cron: string;
  timezone: string;
  next_runs: string[];
}

export interface Worker {
  id: string;
  hostname: string;
  queues: string[];
  active_jobs: number;
  active_job_ids?: string[];
  last_seen: string;
  status: "active" | "gone" | string;
  /** Asked to stop taking jobs (drainWorker). */
  draining?: boolean;
}

export interface ClusterHealth {
  shard_id: string;
  leader_id: string;
  healthy: boolean;
  nodes: Array<{ id: string; role: string; status: string }>;
}

/** One event of GET /api/v1/events. */
export interface JobEvent {
  /** The SSE id: pass it back to resume after this event. */
  id: string;
  type: string;
  job_id: string;
  queue: string;
  state: string;
  at: string;
  attempt: number;
  [k: string]: unknown;
}

/** An answer the SDK does not type field by field. */
export type Untyped = Record<string, unknown>;

export interface QueueCounts {
  pending: number;
  scheduled: number;
  active: number;
  retrying: number;
  completed: number;
  dead: number;
  cancelled: number;
  held: number;
}

/** A queue with its counts and every setting (wire.Queue). */
export interface Queue {
  name: string;
  description: string;
  counts: QueueCounts;
  throughput: number;
  oldest_pending_age: number;
  paused: boolean;
  draining: boolean;
  drained: boolean;
  concurrency: number | null;
  key_concurrency: { max: number } | null;
  throttle: { rate: number; period: string } | null;
  defaults: Record<string, unknown> | null;
  push: Record<string, unknown> | null;
  [k: string]: unknown;
}

/** PUT /api/v1/queues/{name}: the whole configuration (wire.QueueSpec). */
export interface QueueSpec {
  description?: string;
  paused?: boolean;
  concurrency?: number | null;
  key_concurrency?: { max: number | null };
  throttle?: { rate: number; period: Duration } | null;
  defaults?: Record<string, unknown> | null;
  push?: Record<string, unknown>;
}
