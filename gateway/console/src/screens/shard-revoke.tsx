// Revoking a self-hosted shard: typing its name confirms. Its nodes are
// refused from then on. The server refuses while namespaces are on it
// (409): that refusal is shown as what to do.
import { useState } from "preact/hooks";
import { ApiError, del, enc } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog } from "../components/forms";
import { revokeConflict, SHARDS_PATH, type OwnedShard } from "./shards-lib";

type Props = { shard: OwnedShard | null; onClose: () => void; onRevoked: (sh: OwnedShard) => void };

export function RevokeShardDialog(props: Props) {
  return (
    <ItemDialog item={props.shard} id="shard-revoke" title={`Revoke shard ${props.shard?.name ?? ""}`} onClose={props.onClose}>
      {(sh) => <RevokeForm {...props} sh={sh} />}
    </ItemDialog>
  );
}

function RevokeForm(props: Props & { sh: OwnedShard }) {
  const { sh } = props;
  const [typed, setTyped] = useState("");
  const { busy, error, run } = useAsync();
  const confirmed = typed === sh.name;
  const conflict = error instanceof ApiError && error.status === 409;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!confirmed) return;
    if (await run(() => del(`${SHARDS_PATH}/${enc(sh.id)}`))) props.onRevoked(sh);
  };

  return (
    <form id="shard-revoke-form" onSubmit={submit}>
      <p>
        Revoking <strong>{sh.name}</strong> (<span class="mono">{sh.id}</span>) removes it: its nodes' certificates are refused from
        then on and its unused join token stops working. This cannot be undone; a shard that holds namespaces cannot be revoked.
      </p>
      <Field label={`Type ${sh.name} to confirm`} for="shard-revoke-name">
        <input id="shard-revoke-name" autoComplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(val(e))} />
      </Field>
      {conflict ? <ErrorBox id="shard-revoke-conflict" error={revokeConflict(error?.message ?? "")} /> : <ErrorBox id="shard-revoke-error" error={error} />}
      <FormFooter id="shard-revoke-ok" danger busy={busy} disabled={!confirmed} onCancel={props.onClose} label={busy ? "Revoking…" : "Revoke shard"} />
    </form>
  );
}
