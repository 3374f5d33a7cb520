// Watching a tenant's things: a namespace's alert rules and the tenant's
// audit log (a page, every record following cursors, and JSON lines).

import { type CallOptions, type Transport } from "./http.js";
import type * as api from "./api.gen.js";
import type { AlertRule, AlertRuleRequest, AuditPage, AuditRecord } from "./types-admin.js";

const enc = encodeURIComponent;

/** Alert rules of the client's namespace (docs/api/alerts.md). */
export class Alerts {
  constructor(private readonly t: Transport) {}
  /** Every rule of the namespace, with its state. */
  async list(co?: CallOptions): Promise<AlertRule[]> {
    return (await this.t.call<api.AlertRuleList>({ method: "GET", path: "/api/v1/alerts" }, co)).data.alerts ?? [];
  }
  async get(name: string, co?: CallOptions): Promise<AlertRule> {
    return (await this.t.call<AlertRule>({ method: "GET", path: `/api/v1/alerts/${enc(name)}` }, co)).data;
  }
  /** Creates a rule (req.name required); a second of the same name is 409. */
  async create(req: AlertRuleRequest & { name: string }, co?: CallOptions): Promise<AlertRule> {
    return (await this.t.call<AlertRule>({ method: "POST", path: "/api/v1/alerts", body: req }, co)).data;
  }
  /** Replaces every setting of a rule (a rule is not renamed); a repeat is harmless, so it is retried. */
  async update(name: string, req: AlertRuleRequest, co?: CallOptions): Promise<AlertRule> {
    return (await this.t.call<AlertRule>({ method: "PUT", path: `/api/v1/alerts/${enc(name)}`, body: req, retry: true }, co)).data;
  }
  /** Deletes a rule; each queue it fired on resolves. */
  async delete(name: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/alerts/${enc(name)}` }, co);
  }
}

/** Filters of the audit log, each optional (docs/api/audit.md, "Reading it"). */
export interface AuditQuery {
  /** An RBAC action: "job.manage", "key.manage", … */
  action?: string;
  key_id?: string;
  /** This namespace's records; default the client's namespace and control's of every namespace. */
  namespace?: string;
  /** An object's type ("job") or type and id ("job/job_01…"). */
  object?: string;
  /** "ok", "error" (any refusal or failure), or one error code. */
  result?: string;
  /** From this time, inclusive. */
  from?: string | Date;
  /** To this time, exclusive. */
  to?: string | Date;
  /** At most so many on a page, 1 to 1,000 (default 100). */
  limit?: number;
  /** The page after the one that gave it (with the same filters and order). */
  cursor?: string;
  /** "asc", oldest first (the default), or "desc", newest first. */
  order?: "asc" | "desc";
}

/** A page of the audit log as JSON lines: one record a line, and the next page's cursor. */
export interface AuditJsonlPage {
  jsonl: string;
  cursor?: string;
}

/** The header of a JSON-lines page that carries the next page's cursor. */
export const AUDIT_CURSOR_HEADER = "Jobbie-Cursor";

function auditQuery(q: AuditQuery): Record<string, string | number | undefined> {
  const time = (t: string | Date | undefined) => (t instanceof Date ? t.toISOString() : t);
  return { ...q, from: time(q.from), to: time(q.to) };
}

/** The tenant's audit log, oldest first, or newest first with order "desc" (docs/api/audit.md); reading it needs audit.read (owner and admin keys). */
export class Audit {
  constructor(private readonly t: Transport) {}
  /** One page; its cursor, if any, reads the next. */
  async page(q: AuditQuery = {}, co?: CallOptions): Promise<AuditPage> {
    return (await this.t.call<AuditPage>({ method: "GET", path: "/api/v1/audit", query: auditQuery(q) }, co)).data;
  }
  /** Every page, following cursors (a page may hold fewer than limit and still have a next). */
  async *pages(q: AuditQuery = {}, co?: CallOptions): AsyncGenerator<AuditPage> {
    let cursor = q.cursor;
    for (;;) {
      const p = await this.page({ ...q, cursor }, co);
      yield p;
      if (!p.cursor) return;
      cursor = p.cursor;
    }
  }
  /** Every matching record: `for await (const r of client.audit.records({action: "queue.manage"}))`. */
  async *records(q: AuditQuery = {}, co?: CallOptions): AsyncGenerator<AuditRecord> {
    for await (const p of this.pages(q, co)) yield* p.records ?? [];
  }
  /** One page as JSON lines (format=jsonl). */
  async jsonlPage(q: AuditQuery = {}, co?: CallOptions): Promise<AuditJsonlPage> {
    // Read as text: the body is many JSON documents, not one.
    const a = await this.t.call<undefined>({
      method: "GET", path: "/api/v1/audit", query: { ...auditQuery(q), format: "jsonl" }, stream: true,
      headers: { Accept: "application/x-ndjson" },
    }, co);
    const jsonl = await a.response.text();
    const cursor = a.headers.get(AUDIT_CURSOR_HEADER) || undefined;
    return cursor ? { jsonl, cursor } : { jsonl };
  }
  /** The whole matching log as JSON lines, page after page: write each chunk to a file as it comes. */
  async *exportJsonl(q: AuditQuery = {}, co?: CallOptions): AsyncGenerator<string> {
    let cursor = q.cursor;
    for (;;) {
      const p = await this.jsonlPage({ ...q, cursor }, co);
      if (p.jsonl) yield p.jsonl;
      if (!p.cursor) return;
      cursor = p.cursor;
    }
  }
}
