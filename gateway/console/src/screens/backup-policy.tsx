// The namespace's backup policy: a cron schedule in a time zone and how
// many scheduled backups to keep. A role with backup.manage edits it; the
// server judges what was typed and its 400 marks the field it names.
import { useEffect, useRef, useState } from "preact/hooks";
import { del, errorField, isNotFound, put } from "../api";
import { useApi } from "../hooks";
import { ErrorBox, Field, KV, Notice, Time, useAsync, val } from "../components/ui";
import { errorText } from "./queue-lib";
import { policyBody, policyForm, policyPath, type BackupPolicy, type PolicyForm } from "./backups-lib";

export function BackupPolicyCard(props: { namespace: string; manage: boolean }) {
  const res = useApi<BackupPolicy>(policyPath(props.namespace));
  // A namespace without a policy answers 404: that is "none", not an error.
  const none = isNotFound(res.error);
  const policy = none ? null : res.data;
  const loaded = res.data !== undefined || res.error !== undefined;
  return (
    <section class="card backup-policy" id="backup-policy" aria-labelledby="backup-policy-title" data-loaded={loaded ? "true" : "false"}>
      <h2 id="backup-policy-title">Backup policy</h2>
      {res.error && !none && <ErrorBox error={res.error} />}
      {loaded && !props.manage && <PolicyView policy={policy ?? null} />}
      {loaded && props.manage && (res.data !== undefined || none) && <PolicyEditor namespace={props.namespace} policy={policy ?? null} onSaved={res.reload} />}
    </section>
  );
}

function PolicyView({ policy }: { policy: BackupPolicy | null }) {
  if (!policy) return <p class="muted" id="backup-policy-none">This namespace has no backup policy: it is backed up only when asked.</p>;
  return (
    <dl class="kv" id="backup-policy-view">
      <KV k="Schedule" id="backup-policy-cron">
        <span class="mono">{policy.cron}</span> ({policy.timezone})
      </KV>
      <KV k="Keeps">{policy.retention} scheduled backups</KV>
      <KV k="Enabled">{policy.enabled ? "yes" : "no"}</KV>
      <PolicyTimes policy={policy} />
    </dl>
  );
}

function PolicyTimes({ policy }: { policy: BackupPolicy }) {
  return (
    <>
      <KV k="Last run">
        <Time at={policy.last_run_at} />
      </KV>
      {policy.enabled && (
        <KV k="Next run" id="backup-policy-next">
          <Time at={policy.next_run_at} />
        </KV>
      )}
    </>
  );
}

function PolicyEditor(props: { namespace: string; policy: BackupPolicy | null; onSaved: () => void }) {
  const [f, setF] = useState<PolicyForm>(() => policyForm(props.policy));
  // The form starts over when the policy it was made from changes (a
  // save read back), never on mount: effects run after the first paint,
  // and one then would undo what was typed into the form meanwhile.
  const madeFrom = useRef(props.policy);
  useEffect(() => {
    if (madeFrom.current === props.policy) return;
    madeFrom.current = props.policy;
    setF(policyForm(props.policy));
  }, [props.policy]);
  const { busy, error, run } = useAsync();
  const [notice, setNotice] = useState("");
  const bad = (name: string): true | undefined => (errorField(error) === name ? true : undefined);
  const set = <K extends keyof PolicyForm>(k: K, v: PolicyForm[K]) => setF({ ...f, [k]: v });

  const save = (e: Event) => {
    e.preventDefault();
    run(async () => {
      await put<BackupPolicy>(policyPath(props.namespace), policyBody(f));
      setNotice("Backup policy saved.");
      props.onSaved();
    });
  };
  const remove = () =>
    run(async () => {
      await del(policyPath(props.namespace));
      setNotice("Backup policy removed.");
      props.onSaved();
    });

  return (
    <form id="backup-policy-form" onSubmit={save} noValidate>
      {!props.policy && <p class="muted" id="backup-policy-none">No policy yet: this namespace is backed up only when asked. Set one to back it up on a schedule.</p>}
      <div class="filters">
        <Field label="Schedule (cron)" for="policy-cron" hint='5 fields ("0 3 * * *") or a descriptor ("@daily")' hintId="policy-cron-hint">
          <input id="policy-cron" class="mono" autoComplete="off" spellcheck={false} value={f.cron} aria-describedby="policy-cron-hint" aria-invalid={bad("cron")} onInput={(e) => set("cron", val(e))} />
        </Field>
        <Field label="Time zone" for="policy-timezone" hint="IANA name: UTC, Europe/Paris" hintId="policy-timezone-hint">
          <input id="policy-timezone" autoComplete="off" spellcheck={false} value={f.timezone} aria-describedby="policy-timezone-hint" aria-invalid={bad("timezone")} onInput={(e) => set("timezone", val(e))} />
        </Field>
        <Field label="Keep (scheduled backups)" for="policy-retention" hint="1 to 1,000; manual and pre-restore backups are never pruned" hintId="policy-retention-hint">
          <input id="policy-retention" inputMode="numeric" autoComplete="off" value={f.retention} aria-describedby="policy-retention-hint" aria-invalid={bad("retention")} onInput={(e) => set("retention", val(e))} />
        </Field>
        <label class="check policy-enabled">
          <input id="policy-enabled" type="checkbox" checked={f.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} />
          Enabled
        </label>
      </div>
      {props.policy && (
        <dl class="kv">
          <PolicyTimes policy={props.policy} />
        </dl>
      )}
      <ErrorBox id="backup-policy-error" error={error ? errorText(error) : null} />
      <Notice id="backup-policy-notice">{!error && notice}</Notice>
      <div class="policy-buttons">
        {props.policy && (
          <button type="button" id="policy-remove" disabled={busy} onClick={remove}>
            Remove policy
          </button>
        )}
        <button type="submit" id="policy-save" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Save policy"}
        </button>
      </div>
    </form>
  );
}
