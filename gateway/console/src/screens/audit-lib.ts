// The Audit screen's model: a record as the API answers it
// (docs/api/audit.md, wire.AuditRecord), the filters and the request
// they make, and the export's walk through the JSON-lines pages.
import { ApiError, qs } from "../api";

export interface AuditRecord {
  id: string;
  time: string;
  key_id: string;
  key_name?: string;
  role: string;
  action: string;
  route: string;
  object_type: string;
  object_id?: string;
  namespace?: string;
  result: string;
  status: number;
  source_address: string;
  request_id: string;
}

export interface AuditPage {
  records: AuditRecord[] | null;
  cursor?: string;
}

/** AuditFilter is the screen's filters as typed: from and to are datetime-local values (the browser's zone). */
export interface AuditFilter {
  action: string;
  key_id: string;
  namespace: string;
  object: string;
  result: string;
  from: string;
  to: string;
}

export const FILTER_KEYS: readonly (keyof AuditFilter)[] = ["action", "key_id", "namespace", "object", "result", "from", "to"];

/** AUDIT_PAGE is how many records a page of the screen shows. */
export const AUDIT_PAGE = 50;
/** EXPORT_PAGE is how many records each request of an export reads (the API's most). */
export const EXPORT_PAGE = 1000;
/** EXPORT_MAX_PAGES bounds an export, so a filter matching a huge log cannot hold the tab: the rest is a narrower time range away. */
export const EXPORT_MAX_PAGES = 100;

/** RESULTS are the result filter's suggestions: ok, any refusal, and the common error codes. */
export const RESULTS = ["ok", "error", "bad_request", "invalid_json", "forbidden", "not_found", "conflict", "payload_too_large", "quota_exceeded", "unavailable", "internal"];

/** filterOf reads the filters from the URL's query (where they live, so a reload keeps them). */
export function filterOf(q: URLSearchParams): AuditFilter {
  const f = {} as AuditFilter;
  for (const k of FILTER_KEYS) f[k] = q.get(k) ?? "";
  return f;
}

/** filterQuery is f in the URL's query: the non-empty filters. */
export function filterQuery(f: AuditFilter): URLSearchParams {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) if (f[k].trim()) q.set(k, f[k].trim());
  return q;
}

/** rfc3339 is a datetime-local value as an instant ("" stays ""); one that is no time is an ApiError naming field. */
export function rfc3339(local: string, field: string): string {
  const v = local.trim();
  if (!v) return "";
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new ApiError(400, "bad_request", `${JSON.stringify(v)} is not a time`, field);
  return d.toISOString();
}

/** auditPath is the API request of a page: f's filters, after cursor (none: the first page). */
export function auditPath(f: AuditFilter, cursor: string, limit: number, format?: "jsonl", order?: "desc"): string {
  return (
    "/api/v1/audit" +
    qs({
      action: f.action.trim(),
      key_id: f.key_id.trim(),
      namespace: f.namespace.trim(),
      object: f.object.trim(),
      result: f.result.trim(),
      from: rfc3339(f.from, "from"),
      to: rfc3339(f.to, "to"),
      limit,
      cursor,
      format,
      order,
    })
  );
}

/** objectText is what a record acted on: type/id, or the type alone. */
export function objectText(r: Pick<AuditRecord, "object_type" | "object_id">): string {
  return r.object_id ? `${r.object_type}/${r.object_id}` : r.object_type || "—";
}

/** keyText is who did it: the key's name (its id when it has none now). */
export function keyText(r: Pick<AuditRecord, "key_id" | "key_name">): string {
  return r.key_name || r.key_id || "—";
}

/** exportName names an export's file by the time it was made. */
export function exportName(now: Date): string {
  return "audit-" + now.toISOString().replace(/[:.]/g, "-") + ".jsonl";
}

/** ExportPage is one page of JSON lines and the cursor of the next ("" or null: none). */
export type ExportPage = (cursor: string) => Promise<{ text: string; cursor: string | null }>;

/**
 * exportLines reads pages through page until no cursor follows, at most
 * maxPages of them, and answers their lines and whether more remained.
 */
export async function exportLines(page: ExportPage, maxPages = EXPORT_MAX_PAGES): Promise<{ lines: string; pages: number; records: number; more: boolean }> {
  let cursor = "";
  let lines = "";
  let records = 0;
  for (let pages = 1; ; pages++) {
    const p = await page(cursor);
    const text = p.text && !p.text.endsWith("\n") ? p.text + "\n" : p.text;
    lines += text;
    records += text.split("\n").filter((l) => l.trim() !== "").length;
    cursor = p.cursor ?? "";
    if (!cursor) return { lines, pages, records, more: false };
    if (pages >= maxPages) return { lines, pages, records, more: true };
  }
}
