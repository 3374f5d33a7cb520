// The namespace dialog: create one (POST /api/v1/namespaces) or change
// one's settings (PATCH, sending only what changed).
import { useState } from "preact/hooks";
import { patch, post, enc } from "../api";
import { useApi } from "../hooks";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { namespaceNameError, retentionBody, retentionInput, type Namespace } from "./namespace-util";
import { shardLabel, SHARDS_PATH, type OwnedShard, type OwnedShardList } from "./shards-lib";

type Props = {
  /** the namespace to edit, "new" to create one, null when closed */
  namespace: Namespace | "new" | null;
  onClose: () => void;
  /** shard: the self-hosted shard a new namespace was placed on, if one was chosen */
  onSaved: (ns: Namespace, created: boolean, shard?: OwnedShard) => void;
};

export function NamespaceDialog(props: Props) {
  const title = props.namespace === "new" ? "New namespace" : `Namespace ${props.namespace?.name ?? ""}`;
  return (
    <ItemDialog item={props.namespace} id="namespace-dialog" title={title} onClose={props.onClose}>
      {() => <NamespaceForm {...props} />}
    </ItemDialog>
  );
}

function NamespaceForm(props: Props) {
  const creating = props.namespace === "new";
  const orig = props.namespace && props.namespace !== "new" ? props.namespace : null;
  const [name, setName] = useState(orig?.name ?? "");
  const [description, setDescription] = useState(orig?.description ?? "");
  const [retention, setRetention] = useState(retentionInput(orig?.retention));
  const [protect, setProtect] = useState(orig?.deletion_protection ?? false);
  const [touched, setTouched] = useState(false);
  const [shard, setShard] = useState("");
  // The tenant's self-hosted shards, to place a new namespace on one; none
  // (or a role that may not list them): the server places it.
  const shards = useApi<OwnedShardList>(creating ? SHARDS_PATH : null).data?.shards ?? [];
  const { busy, error, run } = useAsync();

  const nameErr = creating && touched ? namespaceNameError(name) : "";

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (creating && namespaceNameError(name)) return;
    await run(async () => {
      if (creating) {
        const body: Record<string, unknown> = { name, description, deletion_protection: protect };
        const r = retentionBody(retention);
        if (r !== null) body.retention = r;
        if (shard) body.shard = shard;
        props.onSaved(await post<Namespace>("/api/v1/namespaces", body), true, shards.find((s) => s.id === shard));
        return;
      }
      if (!orig) return;
      // A merge patch: only the fields that changed; null clears one.
      const body: Record<string, unknown> = {};
      if (description !== orig.description) body.description = description === "" ? null : description;
      if (retention.trim() !== retentionInput(orig.retention)) body.retention = retentionBody(retention);
      if (protect !== orig.deletion_protection) body.deletion_protection = protect;
      if (Object.keys(body).length === 0) {
        props.onClose();
        return;
      }
      props.onSaved(await patch<Namespace>(`/api/v1/namespaces/${enc(orig.name)}`, body), false);
    });
  };

  return (
    <form id="namespace-form" onSubmit={submit} noValidate>
      <Field label="Name" for="ns-name" hint={creating ? "Lowercase letters, digits and '-'; it cannot be changed later." : "A namespace cannot be renamed."}>
        <input
          id="ns-name"
          required
          autoComplete="off"
          spellcheck={false}
          maxLength={63}
          value={name}
          disabled={!creating}
          aria-invalid={nameErr ? true : undefined}
          aria-describedby={nameErr ? "ns-name-error" : undefined}
          onInput={(e) => setName(val(e))}
          onBlur={() => setTouched(true)}
        />
      </Field>
      {nameErr && (
        <p id="ns-name-error" class="field-error">
          {nameErr}
        </p>
      )}
      <Field label="Description" for="ns-description">
        <textarea id="ns-description" class="ns-description" maxLength={1024} value={description} onInput={(e) => setDescription(val(e))} />
      </Field>
      <Field
        label="Retention of finished jobs"
        for="ns-retention"
        hint='How long completed and dead jobs are kept, e.g. "7d", "36h" or a number of seconds (1 minute to 10 years). Empty: none set.'
      >
        <input id="ns-retention" autoComplete="off" spellcheck={false} placeholder="e.g. 7d" value={retention} onInput={(e) => setRetention(val(e))} />
      </Field>
      {creating && shards.length > 0 && (
        <Field
          label="Shard"
          for="ns-shard"
          hint="Where its jobs are kept: the hosted service (placed automatically) or one of your self-hosted shards. It cannot be changed here later."
        >
          <select id="ns-shard" value={shard} onChange={(e) => setShard(val(e))}>
            <Options choices={[{ value: "", label: "Hosted (placed automatically)" }, ...shards.map((s) => ({ value: s.id, label: shardLabel(s) }))]} />
          </select>
        </Field>
      )}
      <label class="check">
        <input id="ns-protect" type="checkbox" checked={protect} onChange={(e) => setProtect(e.currentTarget.checked)} />
        Deletion protection (the namespace cannot be deleted while this is on)
      </label>
      <ErrorBox error={error} />
      <FormFooter id="ns-save" busy={busy} onCancel={props.onClose} label={creating ? (busy ? "Creating…" : "Create") : busy ? "Saving…" : "Save"} />
    </form>
  );
}
