// The API's JSON shapes as the SDK names them: aliases of the types
// generated from the OpenAPI document (api.gen.ts, `api` in the package's
// exports), and the few shapes of the SDK's own (a Date where the API
// takes a time, an answer marked replayed, an event with its SSE id).
// Times are RFC 3339 strings; a Duration is a "5s"-style string or a
// number of seconds.

import type * as api from "./api.gen.js";
import type { CallOptions } from "./http.js";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Duration = string | number;
export type Priority = api.JobDetail["priority"];
export type JobState = api.JobDetail["state"];

/** A chain step, an on_failure or on_exit handler. */
export type StepSpec = api.StepSpec;
export type ChainSpec = api.ChainSpec;

/** A job's fields besides its queue and payload (docs/api/jobs.md, "Enqueue options"). */
export interface EnqueueFields extends Omit<api.EnqueueRequest, "queue" | "payload" | "scheduled_at"> {
  /** RFC 3339 time or a Date. */
  scheduled_at?: string | Date;
}

/** Enqueue options: a job's fields, and whether it continues the running handler's trace. */
export interface EnqueueOptions extends EnqueueFields {
  /**
   * Within a Worker's handler (or through job.client) a job naming no
   * traceparent continues the handled job's trace; false: it starts none.
   * Default true.
   */
  inheritTrace?: boolean;
}

/** Options of a batch enqueue. */
export interface BatchOptions extends CallOptions {
  /** As EnqueueOptions.inheritTrace, for every job and the callback naming no traceparent. Default true. */
  inheritTrace?: boolean;
}

/** One job of enqueue/batch. */
export interface EnqueueRequest extends EnqueueFields {
  queue: string;
  payload?: unknown;
}

/** The answer's body, marked when the server gave back an earlier send's answer (Idempotency-Replayed). */
export type Replayed<T> = T & { replayed?: boolean };

export type EnqueueResult = Replayed<api.EnqueueResponse>;
export type BatchSpec = api.BatchSpec;
export type BatchEnqueueResult = Replayed<api.BatchResponse>;

/** A job handed to a worker. */
export type FetchedJob = api.FetchedJob;
export type FetchRequest = api.FetchRequest;
export type FetchBatchRequest = api.FetchBatchRequest;

export interface Progress {
  current: number;
  total: number;
  message?: string;
}

export type HeartbeatEntry = api.HeartbeatEntry;
export type HeartbeatStatus = "ok" | "cancel" | "lost";
export type FailResult = api.FailResponse;
export type AckBatchEntry = api.AckBatchEntry;
export type AckBatchResult = api.AckBatchResult;
export type StatusResponse = api.StatusResponse;
export type JobError = api.JobError;

/** GET /api/v1/jobs/{id}. */
export type JobDetail = api.JobDetail;
export type JobOpResult = api.JobOpResponse;
export type DeadJob = api.DeadJob;
export type DeadPage = api.DeadPage;

/** A page of a cursor-paged list. */
export interface Page {
  cursor: string | null;
  has_more: boolean;
}

export type Batch = api.Batch;
export type BatchList = api.BatchList;
export type ChainStepView = api.ChainStepView;
export type ChainView = api.ChainView;

/** Search filters (docs/search.md); every one combines with AND. */
export type SearchFilter = api.SearchFilter;
export type SearchRequest = api.SearchRequest;
export type SearchJob = api.SearchJob;
export type SearchPage = api.SearchPage;

export type BulkAction = api.BulkRequest["action"];
export type BulkRequest = api.BulkRequest;
/** A bulk action done at once. */
export type BulkResult = api.BulkResult;
/** A bulk action over 10,000 jobs, run in the background. */
export type BulkAccepted = api.BulkAccepted;
export type BulkOperation = api.BulkOperation;
export type BulkOperationList = api.BulkOperationList;

export type ScheduleRequest = api.ScheduleRequest;
export type Schedule = api.Schedule;
export type SchedulePreview = api.SchedulePreview;

/** A worker of GET /api/v1/workers. */
export type Worker = api.Worker;
export type WorkerDrainResponse = api.WorkerDrainResponse;
export type ClusterHealth = api.ClusterHealth;

/** One event of GET /api/v1/events, with the SSE id that resumes the stream after it. */
export type JobEvent = api.Event & { id: string };

/** A queue with its counts and every setting. */
export type Queue = api.Queue;
export type QueueCounts = api.QueueCounts;
/** PUT /api/v1/queues/{name}: the whole configuration. */
export type QueueSpec = api.QueueSpec;
export type QueueDefaults = api.QueueDefaultsInput;
export type DrainResponse = api.DrainResponse;
/** A queue's history (GET /api/v1/queues/{name}/stats): a bucket per step, oldest first, every step present. */
export type QueueStats = api.QueueStats;
export type QueueStatsBucket = api.QueueStatsBucket;
/** Attempts' processing times in a step: their count and percentiles in milliseconds. */
export type ProcessingTime = api.ProcessingTime;
/** What an autoscaler reads of a queue, live (GET /api/v1/queues/{name}/scale): demand is never 0 while a job is in flight or, unless the queue is paused, pending. */
export type QueueScale = api.QueueScale;

/** The query of a queue's history; each field left out takes the server's default. */
export interface QueueStatsQuery {
  /** Start (default: an hour, or a day with step "1h", before to); moved back to its step's start. */
  from?: string | Date;
  /** End (default: now); moved forward to its step's end. */
  to?: string | Date;
  /** "1m" (minute buckets, kept 48 hours; the default) or "1h" (hour buckets, kept 30 days). */
  step?: "1m" | "1h";
}
export type ClearResponse = api.ClearResponse;
