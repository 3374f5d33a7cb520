// The current namespace's egress allow-list: the hosts its push queues
// and webhooks may call. A role with namespace.manage edits it, one row
// per entry; the server judges each entry and its 400 (egress_allow[i])
// marks the row it names. Others see the list read-only.
import { useState } from "preact/hooks";
import { errorField, put } from "../api";
import { useApi } from "../hooks";
import { ErrorBox, Notice, useAsync, val } from "../components/ui";
import { errorText } from "./queue-lib";
import { badRow, egressEntries, egressPath, egressRows, MAX_EGRESS_ALLOW, rowError, type NamespaceEgress } from "./namespace-egress-lib";

export function EgressCard(props: { namespace: string; manage: boolean }) {
  const res = useApi<NamespaceEgress>(egressPath(props.namespace));
  const allow = res.data?.egress_allow;
  // Kept here, not in the editor, which a saved list starts again.
  const [notice, setNotice] = useState("");
  return (
    <section class="card ns-egress" id="egress" aria-labelledby="egress-title" data-loaded={allow ? "true" : "false"}>
      <h2 id="egress-title">Egress allow-list</h2>
      <p class="muted">
        The hosts the push queues and webhooks of namespace <strong class="mono">{props.namespace}</strong> may call: a host name, a{" "}
        <span class="mono">*.domain</span> pattern (any subdomain) or an IP address. With none, any public host may be called.
      </p>
      <ErrorBox error={res.error} />
      {allow && !props.manage && <EgressView allow={allow} />}
      {/* Keyed by the list's content: a read again that finds the same list
          (the namespace's, or the session's, settling) keeps what is being
          typed; a changed list starts the editor again from it. */}
      {allow && props.manage && (
        <EgressEditor
          key={JSON.stringify(allow)}
          namespace={props.namespace}
          allow={allow}
          onSaving={() => setNotice("")}
          onSaved={(msg) => {
            setNotice(msg);
            res.reload();
          }}
        />
      )}
      <Notice id="egress-notice">{notice}</Notice>
    </section>
  );
}

function EgressView({ allow }: { allow: string[] }) {
  if (allow.length === 0) return <p id="egress-none">No allow-list: any public host may be called.</p>;
  return (
    <ul id="egress-list" class="egress-list">
      {allow.map((h) => (
        <li key={h} class="mono" data-egress-host={h}>
          {h}
        </li>
      ))}
    </ul>
  );
}

function EgressEditor(props: { namespace: string; allow: string[]; onSaving: () => void; onSaved: (notice: string) => void }) {
  const [rows, setRows] = useState(() => egressRows(props.allow));
  const [rowOf, setRowOf] = useState<number[]>([]);
  const { busy, error, run } = useAsync();
  const bad = error ? badRow(errorField(error), rowOf) : -1;
  const setRow = (i: number, v: string) => setRows(rows.map((r, j) => (j === i ? v : r)));
  const remove = (i: number) => setRows(rows.length > 1 ? rows.filter((_, j) => j !== i) : [""]);

  const save = (e: Event) => {
    e.preventDefault();
    const { body, rowOf } = egressEntries(rows);
    setRowOf(rowOf);
    props.onSaving();
    run(async () => {
      const held = await put<NamespaceEgress>(egressPath(props.namespace), body);
      const n = held.egress_allow.length;
      props.onSaved(n ? `Egress allow-list saved: ${n} ${n === 1 ? "entry" : "entries"}.` : "Egress allow-list removed: any public host may be called.");
    });
  };

  return (
    <form id="egress-form" onSubmit={save} noValidate>
      {props.allow.length === 0 && (
        <p class="muted" id="egress-none">
          No allow-list yet: any public host may be called.
        </p>
      )}
      <ol class="egress-rows">
        {rows.map((r, i) => (
          <li key={i} data-egress-row={i}>
            <input
              aria-label={`Allowed host ${i + 1}`}
              class="mono"
              autoComplete="off"
              spellcheck={false}
              placeholder="hooks.example.com"
              value={r}
              aria-invalid={bad === i ? true : undefined}
              aria-describedby={bad === i ? "egress-row-error" : undefined}
              onInput={(e) => setRow(i, val(e))}
            />
            <button type="button" data-egress-remove={i} aria-label={`Remove allowed host ${i + 1}`} onClick={() => remove(i)}>
              Remove
            </button>
            {bad === i && (
              <p id="egress-row-error" class="field-error">
                {rowError(error?.message ?? "")}
              </p>
            )}
          </li>
        ))}
      </ol>
      {bad < 0 && <ErrorBox id="egress-error" error={error ? errorText(error) : null} />}
      <div class="egress-buttons">
        <button type="button" id="egress-add" disabled={rows.length >= MAX_EGRESS_ALLOW} onClick={() => setRows([...rows, ""])}>
          Add host
        </button>
        <button type="submit" id="egress-save" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Save allow-list"}
        </button>
      </div>
    </form>
  );
}
