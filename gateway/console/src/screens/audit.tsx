// The Audit screen: the tenant's audit log (docs/api/audit.md) with its
// filters (kept in the URL), newest first, pages by the API's cursor, one record's
// detail, and an export of the filtered log as JSON lines. A key whose
// role may not read it is told so, and the rest of the console goes on.
import { useMemo, useState } from "preact/hooks";
import { ApiError, errorOf, headers } from "../api";
import { useApi } from "../hooks";
import { setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { Badge, Empty, ErrorBox, Field, KV, Loading, Notice, Screen, useAsync } from "../components/ui";
import { ItemDialog } from "../components/forms";
import { Table } from "../components/table";
import { counted } from "../lib/format";
import {
  AUDIT_PAGE,
  auditPath,
  EXPORT_PAGE,
  exportLines,
  exportName,
  filterOf,
  filterQuery,
  keyText,
  objectText,
  RESULTS,
  type AuditFilter,
  type AuditPage,
  type AuditRecord,
} from "./audit-lib";
import "./audit.css";

/** pathOf is the request of a page, or the error of a filter the browser cannot send (a time that is none). */
function pathOf(f: AuditFilter, cursor: string): { path: string | null; error?: Error } {
  try {
    return { path: auditPath(f, cursor, AUDIT_PAGE, undefined, "desc") }; // the latest first, as an operator looks
  } catch (e) {
    return { path: null, error: e as Error };
  }
}

export function Audit() {
  const { can } = useSession();
  const query = useLocation().query;
  const applied = useMemo(() => filterOf(query), [query.toString()]);
  // cursors[i] is the cursor of page i+1 (page 1's is ""); Back pops.
  const [cursors, setCursors] = useState<string[]>([""]);
  const [shown, setShown] = useState<AuditRecord | null>(null);
  const req = pathOf(applied, cursors[cursors.length - 1]);
  const page = useApi<AuditPage>(can("audit.read") ? req.path : null);
  const forbidden = !can("audit.read") || (page.error instanceof ApiError && page.error.status === 403);
  const records = page.data?.records ?? [];

  const apply = (f: AuditFilter) => {
    setCursors([""]);
    setQuery(filterQuery(f));
  };

  return (
    <Screen name="audit" title="Audit log" ready={forbidden || page.data !== undefined || page.error !== undefined || req.error !== undefined}>
      {forbidden ? (
        <p class="muted" id="audit-forbidden">
          Not allowed: this key’s role may not read the audit log (it needs <code>audit.read</code>, which owner and admin keys hold).
        </p>
      ) : (
        <>
          <p class="muted">
            Every administrative and job-management request, whether done or refused, newest first within the filters: Next goes back in time.
          </p>
          <Filters key={query.toString()} initial={applied} onApply={apply} />
          <ErrorBox id="audit-error" error={req.error ?? page.error} />
          <ExportButton filter={applied} />
          {!page.data && !page.error && !req.error && <Loading />}
          {page.data && records.length === 0 && <Empty>No audit record matches.</Empty>}
          {records.length > 0 && (
            <Table id="audit" class="audit" cols={["Time", "Key", "Action", "Object", "Namespace", "Result", { label: "Detail", hidden: true }]}>
              {records.map((r) => (
                <tr key={r.id} data-record={r.id} data-action={r.action} data-result={r.result}>
                  <td class="audit-time mono">{r.time}</td>
                  <td class="audit-key" title={r.key_id}>
                    {keyText(r)}
                  </td>
                  <td class="audit-action mono">{r.action}</td>
                  <td class="audit-object mono trunc" title={objectText(r)}>
                    {objectText(r)}
                  </td>
                  <td class="audit-namespace">{r.namespace || <span class="muted">—</span>}</td>
                  <td class="audit-result">
                    <ResultBadge r={r} />
                  </td>
                  <td>
                    <button type="button" class="audit-detail" aria-label={`Detail of record ${r.id}`} onClick={() => setShown(r)}>
                      Detail
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
          <nav class="pager" aria-label="Audit pages">
            <button type="button" id="audit-prev" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
              ◀ Back
            </button>
            <span aria-current="page">Page {cursors.length}</span>
            <button type="button" id="audit-next" disabled={!page.data?.cursor} onClick={() => page.data?.cursor && setCursors([...cursors, page.data.cursor])}>
              Next ▶
            </button>
          </nav>
          <ItemDialog item={shown} id="audit-record" title="Audit record" wide onClose={() => setShown(null)}>
            {(r) => <RecordDetail r={r} onClose={() => setShown(null)} />}
          </ItemDialog>
        </>
      )}
    </Screen>
  );
}

function ResultBadge({ r }: { r: AuditRecord }) {
  const ok = r.result === "ok";
  return (
    <Badge class={ok ? "audit-ok" : "audit-refused"} glyph={ok ? "✓" : "✕"}>
      {r.result} {r.status}
    </Badge>
  );
}

function RecordDetail({ r, onClose }: { r: AuditRecord; onClose: () => void }) {
  return (
    <>
      <dl class="kv" id="audit-record-kv">
        <KV k="Time">{r.time}</KV>
        <KV k="Key" id="audit-record-key">
          {r.key_name ? `${r.key_name} (${r.key_id})` : r.key_id}
        </KV>
        <KV k="Role">{r.role}</KV>
        <KV k="Action" id="audit-record-action">
          {r.action}
        </KV>
        <KV k="Route" class="mono" id="audit-record-route">
          {r.route}
        </KV>
        <KV k="Object" class="mono" id="audit-record-object">
          {objectText(r)}
        </KV>
        <KV k="Namespace">{r.namespace || "—"}</KV>
        <KV k="Result" id="audit-record-result">
          {r.result} ({r.status})
        </KV>
        <KV k="Source address" class="mono">
          {r.source_address}
        </KV>
        <KV k="Request id" class="mono">
          {r.request_id}
        </KV>
        <KV k="Record id" class="mono">
          {r.id}
        </KV>
      </dl>
      <div class="dialog-footer">
        <button type="button" id="audit-record-close" onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}

function Filters(props: { initial: AuditFilter; onApply: (f: AuditFilter) => void }) {
  const [f, setF] = useState(props.initial);
  const set = (k: keyof AuditFilter, v: string) => setF({ ...f, [k]: v });
  const input = (k: keyof AuditFilter, label: string, placeholder: string, type = "text") => (
    <Field label={label} for={"audit-f-" + k}>
      <input id={"audit-f-" + k} type={type} autoComplete="off" spellcheck={false} placeholder={placeholder} value={f[k]} onInput={(e) => set(k, e.currentTarget.value)} />
    </Field>
  );
  return (
    <form
      id="audit-filters"
      class="audit-filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(f);
      }}
    >
      {input("action", "Action", "queue.manage")}
      {input("key_id", "Key id", "key_…")}
      {input("namespace", "Namespace", "every one")}
      {input("object", "Object", "queue or queue/emails")}
      <Field label="Result" for="audit-f-result">
        <input id="audit-f-result" list="audit-results" autoComplete="off" placeholder="any" value={f.result} onInput={(e) => set("result", e.currentTarget.value)} />
        <datalist id="audit-results">
          {RESULTS.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
      </Field>
      {input("from", "From", "", "datetime-local")}
      {input("to", "To (before)", "", "datetime-local")}
      <div class="audit-filter-buttons">
        <button type="submit" id="audit-apply" class="primary">
          Apply
        </button>
        <button type="button" id="audit-clear" onClick={() => props.onApply(filterOf(new URLSearchParams()))}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** ExportButton downloads the filtered log as JSON lines, following the API's cursor page by page. */
function ExportButton({ filter }: { filter: AuditFilter }) {
  const a = useAsync();
  const [notice, setNotice] = useState("");
  const run = () =>
    a.run(async () => {
      setNotice("");
      const out = await exportLines(async (cursor) => {
        const res = await fetch(auditPath(filter, cursor, EXPORT_PAGE, "jsonl"), { headers: headers("GET"), credentials: "same-origin" });
        if (!res.ok) throw await errorOf(res);
        return { text: await res.text(), cursor: res.headers.get("Jobbie-Cursor") };
      });
      const url = URL.createObjectURL(new Blob([out.lines], { type: "application/x-ndjson" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = exportName(new Date());
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setNotice(`Exported ${counted(out.records, "record")}${out.more ? "; more remain: narrow the time range for the rest" : ""}.`);
    });
  return (
    <div class="toolbar audit-export">
      <button type="button" id="audit-export" disabled={a.busy} onClick={run}>
        {a.busy ? "Exporting…" : "Export (JSON lines)"}
      </button>
      <ErrorBox error={a.error} />
      <Notice id="audit-export-notice">{notice}</Notice>
    </div>
  );
}
