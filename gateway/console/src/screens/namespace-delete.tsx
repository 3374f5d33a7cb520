// Deleting a namespace: typing its name confirms. The server refuses
// while deletion protection is on (409 deletion_protected), and while the
// namespace holds jobs, queues or schedules unless forced (409
// namespace_not_empty): either refusal is shown as it came.
import { useState } from "preact/hooks";
import { ApiError, del, enc, qs } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog } from "../components/forms";
import type { Namespace } from "./namespace-util";

type Props = {
  namespace: Namespace | null;
  /** the console works in it now */
  current: boolean;
  onClose: () => void;
  onDeleted: (name: string) => void;
};

export function NamespaceDelete(props: Props) {
  return (
    <ItemDialog item={props.namespace} id="namespace-delete" title={`Delete namespace ${props.namespace?.name ?? ""}`} onClose={props.onClose}>
      {(ns) => <DeleteForm {...props} ns={ns} />}
    </ItemDialog>
  );
}

function DeleteForm(props: Props & { ns: Namespace }) {
  const ns = props.ns;
  const [typed, setTyped] = useState("");
  const [force, setForce] = useState(false);
  const [notEmpty, setNotEmpty] = useState(false);
  const { busy, error, run } = useAsync();
  const confirmed = typed === ns.name;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!confirmed) return;
    const ok = await run(async () => {
      try {
        await del(`/api/v1/namespaces/${enc(ns.name)}${qs({ force: force || undefined })}`);
      } catch (err) {
        if (err instanceof ApiError && err.code === "namespace_not_empty") setNotEmpty(true);
        throw err;
      }
    });
    if (ok) props.onDeleted(ns.name);
  };

  return (
    <form onSubmit={submit}>
      <p>
        Deleting <strong class="mono">{ns.name}</strong> deletes everything in it: its queues, jobs and schedules. This cannot be undone.
      </p>
      {ns.deletion_protection && (
        <p class="muted" id="ns-delete-protected">
          Deletion protection is on: the server will refuse until it is turned off (Edit).
        </p>
      )}
      {props.current && <p class="muted">The console works in this namespace now; it will switch to the key's default namespace.</p>}
      <Field label={`Type ${ns.name} to confirm`} for="ns-confirm-name">
        <input id="ns-confirm-name" autoComplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(val(e))} />
      </Field>
      {notEmpty && (
        <label class="check">
          <input id="ns-force" type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} />
          Delete its jobs, queues and schedules with it
        </label>
      )}
      <ErrorBox error={error} />
      <FormFooter
        id="namespace-delete-ok"
        danger
        busy={busy}
        disabled={!confirmed || (notEmpty && !force)}
        onCancel={props.onClose}
        label={busy ? "Deleting…" : "Delete namespace"}
      />
    </form>
  );
}
