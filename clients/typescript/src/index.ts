// @jobbie/client: Jobbie's TypeScript SDK. The producer API of every
// resource family (Client), the worker runtime (Worker), push handlers
// (pushHandler) and webhook verification (WebhookVerifier), on the
// platform's fetch and WebCrypto alone.

export { Client, type EventsOptions, type FailOptions, type FetchOptions, type ReportOptions } from "./client.js";
export { type CallOptions, type ClientOptions, Transport } from "./http.js";
export * from "./errors.js";
export * from "./types.js";
export * from "./types-admin.js";
/** Every JSON shape of the API, generated from its OpenAPI document: `api.JobDetail`, `api.Invoice`, … */
export type * as api from "./api.gen.js";
export { Batches, Bulk, Queues, Schedules, Search } from "./resources.js";
export {
  AI, type AIUsage, type AIUsageBucket, type AIUsageQuery, type AIUsageResponse, type ApproveResponse, type Budget, Budgets, type BudgetSpec,
  formatCostUSD, parseCostUSD,
} from "./ai.js";
export { Admin, Backups, Keys, Namespaces, Roles, SigningKeys, Usage, type UsageQuery, Webhooks } from "./admin.js";
export { parseSSE, type SSEMessage } from "./sse.js";
export {
  DELIVERY_ABORTED, describeError, type Handler, Job, JOB_CANCELLED, JobStopped, LEASE_LOST, NonRetryableError, WORKER_SHUTDOWN,
} from "./job.js";
export { type Logger, Worker, type WorkerOptions } from "./worker.js";
export { Alerts, Audit, AUDIT_CURSOR_HEADER, type AuditJsonlPage, type AuditQuery } from "./observe.js";
export { pushHandler } from "./push.js";
export { checkTraceparent, checkTracestate, currentTrace, runInTrace, type TraceContext } from "./trace.js";
export type { TracerProviderLike } from "./otel.js";
export { DEFAULT_TOLERANCE_SECONDS, verifyWebhook, WebhookVerificationError, WebhookVerifier } from "./verify.js";
