// Removing one node of a self-hosted shard (lost with its volume, say):
// typing its id confirms. Its id is retired for good; the node must also
// leave the shard's own Raft group, which only the tenant's nodes can do.
// The shard's last node is refused (409), shown as what to do.
import { useState } from "preact/hooks";
import { ApiError, del } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog } from "../components/forms";
import { nodePath, raftRemoveCommand, removeNodeConflict, type OwnedShard } from "./shards-lib";

export type NodeOf = { sh: OwnedShard; node: string };
type Props = { target: NodeOf | null; onClose: () => void; onRemoved: (t: NodeOf) => void };

export function RemoveNodeDialog(props: Props) {
  const t = props.target;
  return (
    <ItemDialog item={t} id="shard-node-remove" title={`Remove node ${t?.node ?? ""} of shard ${t?.sh.name ?? ""}`} onClose={props.onClose}>
      {(target) => <RemoveForm {...props} target={target} />}
    </ItemDialog>
  );
}

function RemoveForm(props: Props & { target: NodeOf }) {
  const { sh, node } = props.target;
  const [typed, setTyped] = useState("");
  const { busy, error, run } = useAsync();
  const confirmed = typed === node;
  const conflict = error instanceof ApiError && error.status === 409;
  const others = sh.nodes.filter((n) => n !== node);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!confirmed) return;
    if (await run(() => del(nodePath(sh.id, node)))) props.onRemoved(props.target);
  };

  return (
    <form id="shard-node-remove-form" onSubmit={submit}>
      <p>
        Removing <strong class="mono">{node}</strong> drops it from the joined nodes of <strong>{sh.name}</strong> (
        <span class="mono">{sh.id}</span>) for good: its tunnels are cut, its certificate is renewed no more, and{" "}
        <strong>its id is retired</strong>: no node joins the shard under <span class="mono">{node}</span> again. To replace it, add a
        node under a new id.
      </p>
      <p class="shard-raft-note">
        It stays in the shard's own Raft group until you take it out there: on the machine of a node that stays
        {others.length ? <> ({others.join(", ")})</> : null}, with that node's own credentials (its <code>--data-dir</code>, which holds them in{" "}
        <code>&lt;data-dir&gt;/selfhosted</code>), at its <code>--http</code> address:
      </p>
      <pre id="shard-raft-remove" class="shard-command" tabIndex={0} aria-label="Command that takes the node out of the Raft group">
        {raftRemoveCommand(node, others[0])}
      </pre>
      {others.length === 0 && (
        <p class="muted" id="shard-node-last">
          {node} is the shard's only node: a shard keeps at least one.
        </p>
      )}
      <Field label={`Type ${node} to confirm`} for="shard-node-remove-id">
        <input id="shard-node-remove-id" autoComplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(val(e))} />
      </Field>
      {conflict ? (
        <ErrorBox id="shard-node-remove-conflict" error={removeNodeConflict(error?.message ?? "")} />
      ) : (
        <ErrorBox id="shard-node-remove-error" error={error} />
      )}
      <FormFooter id="shard-node-remove-ok" danger busy={busy} disabled={!confirmed} onCancel={props.onClose} label={busy ? "Removing…" : "Remove node"} />
    </form>
  );
}
