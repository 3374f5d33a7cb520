// Restoring a backup: into a new namespace (created for it, by name), or
// over the backup's own namespace, which needs its name typed and is
// backed up first (a pre_restore backup) so the replace can be undone.
import { useState } from "preact/hooks";
import { post } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog } from "../components/forms";
import { errorText } from "./queue-lib";
import { counted } from "../lib/format";
import { backupPath, canRestore, restoreBody, type Backup, type RestoreMode } from "./backups-lib";

export function RestoreDialog(props: { backup: Backup | null; onClose: () => void; onStarted: (b: Backup) => void }) {
  return (
    <ItemDialog item={props.backup} id="restore-dialog" title={`Restore backup ${props.backup?.id ?? ""}`} onClose={props.onClose}>
      {(b) => <RestoreForm b={b} onClose={props.onClose} onStarted={props.onStarted} />}
    </ItemDialog>
  );
}

function RestoreForm(props: { b: Backup; onClose: () => void; onStarted: (b: Backup) => void }) {
  const { b } = props;
  const [mode, setMode] = useState<RestoreMode>("new");
  const [target, setTarget] = useState("");
  const [confirm, setConfirm] = useState("");
  const { busy, error, run } = useAsync();
  const ok = canRestore(mode, target, confirm, b.namespace);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!ok) return;
    let started: Backup | undefined;
    if (await run(async () => void (started = await post<Backup>(backupPath(b.id, "restore"), restoreBody(mode, target))))) props.onStarted(started!);
  };

  return (
    <form id="restore-form" onSubmit={submit} noValidate>
      <p>
        Backup <span class="mono">{b.id}</span> of <strong class="mono">{b.namespace}</strong>, taken <time dateTime={b.created_at}>{new Date(b.created_at).toISOString()}</time>
        {" "}({counted(b.jobs, "job")}).
      </p>
      <fieldset class="restore-mode">
        <legend>Restore</legend>
        <label class="check">
          <input type="radio" name="restore-mode" id="restore-mode-new" value="new" checked={mode === "new"} onChange={() => setMode("new")} />
          Into a new namespace
        </label>
        <label class="check">
          <input type="radio" name="restore-mode" id="restore-mode-replace" value="replace" checked={mode === "replace"} onChange={() => setMode("replace")} />
          Replace namespace {b.namespace}
        </label>
      </fieldset>
      {mode === "new" ? (
        <Field label="New namespace name" for="restore-target" hint="A namespace that does not exist yet; it is created with the backup's queues, jobs and schedules." hintId="restore-target-hint">
          <input
            id="restore-target"
            autoComplete="off"
            spellcheck={false}
            value={target}
            aria-describedby="restore-target-hint"
            aria-invalid={error ? true : undefined}
            onInput={(e) => setTarget(val(e))}
          />
        </Field>
      ) : (
        <>
          <p class="restore-warning" id="restore-replace-warning">
            Everything now in <strong class="mono">{b.namespace}</strong> (its queues, jobs and schedules) is replaced by the backup. A{" "}
            <span class="mono">pre_restore</span> backup of the namespace as it is now is taken first, so this can be undone by restoring that one.
          </p>
          <Field label={`Type ${b.namespace} to confirm`} for="restore-confirm">
            <input id="restore-confirm" autoComplete="off" spellcheck={false} value={confirm} onInput={(e) => setConfirm(val(e))} />
          </Field>
        </>
      )}
      <ErrorBox error={error ? errorText(error) : null} />
      <FormFooter
        id="restore-ok"
        danger={mode === "replace"}
        busy={busy}
        disabled={!ok}
        onCancel={props.onClose}
        label={busy ? "Starting…" : mode === "replace" ? `Replace ${b.namespace}` : "Restore"}
      />
    </form>
  );
}
