// The Webhooks screens' model: an endpoint and its delivery log as the API
// answers them (docs/api/webhooks.md), the endpoint form and the request
// it sends, and how an endpoint's state and an attempt read.

export interface WebhookDisabled {
  reason: string;
  at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  queues: string[];
  enabled: boolean;
  description: string;
  secret_ids: string[];
  /** only in the answer of a create with a secret and of a rotation */
  secret?: string;
  disabled?: WebhookDisabled | null;
  failing_since?: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookList {
  webhooks: Webhook[];
}

export interface WebhookDelivery {
  event_id: string;
  type: string;
  at: string;
  /** 0: no answer (see error) */
  status: number;
  latency_ms: number;
  error?: string;
  attempt: number;
  ok: boolean;
}

export interface WebhookDeliveryList {
  deliveries: WebhookDelivery[];
}

/** WEBHOOK_EVENTS are the event types an endpoint may subscribe to (wire.WebhookEvents), each with what it means. */
export const WEBHOOK_EVENTS: readonly { name: string; label: string }[] = [
  { name: "job.enqueued", label: "enqueued" },
  { name: "job.started", label: "started (fetched or pushed)" },
  { name: "job.completed", label: "completed" },
  { name: "job.failed", label: "an attempt failed" },
  { name: "job.lease_released", label: "lease released" },
  { name: "job.dead", label: "dead" },
  { name: "job.cancelled", label: "cancelled" },
  { name: "job.pending", label: "came due (scheduled or retrying)" },
  { name: "job.retried", label: "retried by hand" },
  { name: "batch.completed", label: "a batch completed" },
  { name: "chain.completed", label: "a chain ended" },
  { name: "schedule.fired", label: "a schedule fired" },
  { name: "queue.paused", label: "a queue paused" },
  { name: "queue.push_disabled", label: "push turned off by a 410" },
  { name: "webhook.disabled", label: "an endpoint disabled after failing" },
];

/** WebhookForm is the endpoint form as typed: every event ("*") or the ones ticked, and queue patterns one a line. */
export interface WebhookForm {
  url: string;
  all: boolean;
  events: string[];
  queues: string;
  description: string;
  enabled: boolean;
  /** create only: make a whsec_ secret */
  secret: boolean;
}

/** webhookForm is the form for endpoint w, or a new endpoint's (w null): every event, every queue, enabled. */
export function webhookForm(w: Webhook | null): WebhookForm {
  if (!w) return { url: "", all: true, events: [], queues: "", description: "", enabled: true, secret: false };
  const all = w.events.includes("*");
  return {
    url: w.url,
    all,
    events: all ? [] : [...w.events],
    queues: w.queues.join("\n"),
    description: w.description,
    enabled: w.enabled,
    secret: false,
  };
}

/** WebhookRequest is the body of POST /api/v1/webhooks and PUT /api/v1/webhooks/{id}. */
export interface WebhookRequest {
  url: string;
  events: string[];
  queues: string[];
  description: string;
  enabled: boolean;
  secret?: boolean;
}

/**
 * webhookBody is the request for form f: the events ticked, in the list's order (none sent as none, for the server to
 * refuse naming the field), the queue patterns typed, one a line, blanks dropped; secret only for a create.
 */
export function webhookBody(f: WebhookForm, create: boolean): WebhookRequest {
  const events = f.all ? ["*"] : WEBHOOK_EVENTS.map((e) => e.name).filter((n) => f.events.includes(n));
  const queues = f.queues
    .split(/\r?\n/)
    .map((q) => q.trim())
    .filter((q) => q !== "");
  const body: WebhookRequest = { url: f.url.trim(), events, queues, description: f.description, enabled: f.enabled };
  if (create && f.secret) body.secret = true;
  return body;
}

/** toggleEvent ticks or unticks event name in f. */
export function toggleEvent(f: WebhookForm, name: string, on: boolean): WebhookForm {
  const events = on ? [...new Set([...f.events, name])] : f.events.filter((e) => e !== name);
  return { ...f, events };
}

/** webhookState is how an endpoint reads: off (set so), disabled (for failing), failing, or enabled; with a badge class. */
export function webhookState(w: Webhook): { label: string; cls: string; glyph: string } {
  if (!w.enabled) return { label: "off", cls: "webhook-off", glyph: "‖" };
  if (w.disabled) return { label: "disabled", cls: "webhook-disabled", glyph: "✕" };
  if (w.failing_since) return { label: "failing", cls: "webhook-failing", glyph: "!" };
  return { label: "enabled", cls: "webhook-on", glyph: "●" };
}

/** eventsText is an endpoint's events as a short text: "all events", or their names without the "job." prefix. */
export function eventsText(events: string[]): string {
  if (events.includes("*")) return "all events";
  return events.map((e) => e.replace(/^job\./, "")).join(", ");
}

/** queuesText is an endpoint's queue patterns, or "all queues". */
export function queuesText(queues: string[]): string {
  return queues.length === 0 ? "all queues" : queues.join(", ");
}

/** latencyText shows an attempt's latency: under 10 ms with one decimal, else whole ms, seconds from 1 s. */
export function latencyText(ms: number): string {
  if (ms >= 1000) return (ms / 1000).toFixed(2) + " s";
  if (ms < 10) return ms.toFixed(1) + " ms";
  return Math.round(ms) + " ms";
}

/** statusText is an attempt's outcome: its HTTP status, or "no answer" when there was none. */
export function statusText(d: WebhookDelivery): string {
  return d.status === 0 ? "no answer" : String(d.status);
}

/** isTest tells a test event's attempt (it cannot be redelivered: it is not in the event log). */
export function isTest(d: WebhookDelivery): boolean {
  return d.type === "dev.jobbie.test";
}

/** attemptNotice is what the screen says after a test or a redelivery. */
export function attemptNotice(what: string, d: WebhookDelivery): string {
  if (d.ok) return `${what}: delivered (${d.status} in ${latencyText(d.latency_ms)}).`;
  return `${what}: not delivered (${statusText(d)}${d.error ? ": " + d.error : ""}).`;
}

/** matches is the list's filter: URL, description, id, events or queues containing q (case-insensitive). */
export function matches(w: Webhook, q: string): boolean {
  const s = q.trim().toLowerCase();
  if (!s) return true;
  return [w.id, w.url, w.description, ...w.events, ...w.queues].some((t) => t.toLowerCase().includes(s));
}

export const webhookPath = (id: string) => "/api/v1/webhooks/" + encodeURIComponent(id);
export const webhookHref = (id: string) => "/webhooks/" + encodeURIComponent(id);
