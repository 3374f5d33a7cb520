// The Alerts screen's dialog: create or edit a rule. Every field of a
// rule is here; an error the API names a field of is shown under that
// field (and marks it), any other above the buttons; nothing changes.
import { useState } from "preact/hooks";
import { errorField, post, put } from "../api";
import { ErrorBox, Field, useAsync } from "../components/ui";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { ALERT_KINDS, alertBody, alertForm, alertKind, alertPath, DEFAULT_MIN_COUNT, type AlertForm, type AlertRule } from "./alerts-lib";

/** The dialog's item: a new rule ("new") or the rule edited. */
export type AlertTarget = "new" | AlertRule;

/** The fields the form has: an error naming another shows above the buttons. */
const FIELDS = ["name", "kind", "queue", "threshold", "for", "min_count", "enabled"];

export function AlertDialog(props: { target: AlertTarget | null; onClose: () => void; onSaved: (r: AlertRule, created: boolean) => void }) {
  const t = props.target;
  return (
    <ItemDialog item={t} id="alert-dialog" title={t === "new" ? "New alert rule" : "Edit alert rule"} onClose={props.onClose} wide>
      {(r) => <AlertFormView target={r} onClose={props.onClose} onSaved={props.onSaved} />}
    </ItemDialog>
  );
}

/** FieldError is the error under field name, when the API's error names it. */
function FieldError(props: { err: Error | null; name: string }) {
  if (errorField(props.err) !== props.name) return null;
  return (
    <span class="field-error" id={`alert-${props.name}-error`} role="alert">
      {props.err?.message}
    </span>
  );
}

function AlertFormView(props: { target: AlertTarget; onClose: () => void; onSaved: (r: AlertRule, created: boolean) => void }) {
  const create = props.target === "new";
  const [f, setF] = useState<AlertForm>(() => alertForm(props.target === "new" ? null : props.target));
  const a = useAsync();
  const set = <K extends keyof AlertForm>(k: K, v: AlertForm[K]) => setF({ ...f, [k]: v });
  const bad = (name: string) => (errorField(a.error) === name ? true : undefined);
  const kind = alertKind(f.kind);
  const other = a.error && !FIELDS.includes(errorField(a.error) ?? "") ? a.error : null;

  const submit = () =>
    a.run(async () => {
      const body = alertBody(f, create);
      if (body instanceof Error) throw body;
      const r = props.target === "new" ? await post<AlertRule>("/api/v1/alerts", body) : await put<AlertRule>(alertPath(props.target.name), body);
      props.onSaved(r, create);
    });

  return (
    <form
      id="alert-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Field label="Name" for="alert-name" hint={create ? "Letters, digits, . _ or -; unique in the namespace." : "A rule is not renamed."}>
        <input id="alert-name" autoComplete="off" spellcheck={false} value={f.name} disabled={!create} aria-invalid={bad("name")} onInput={(e) => set("name", e.currentTarget.value)} />
        <FieldError err={a.error} name="name" />
      </Field>
      <Field label="Condition" for="alert-kind">
        <select id="alert-kind" value={f.kind} aria-invalid={bad("kind")} onChange={(e) => set("kind", e.currentTarget.value)}>
          <Options choices={ALERT_KINDS.map((k) => ({ value: k.name, label: k.label }))} />
        </select>
        <FieldError err={a.error} name="kind" />
      </Field>
      <Field label="Queue" for="alert-queue" hint="Empty: every queue of the namespace, each on its own.">
        <input id="alert-queue" autoComplete="off" spellcheck={false} value={f.queue} aria-invalid={bad("queue")} onInput={(e) => set("queue", e.currentTarget.value)} />
        <FieldError err={a.error} name="queue" />
      </Field>
      {kind?.threshold && (
        <Field label={kind.threshold} for="alert-threshold">
          <input id="alert-threshold" inputMode="decimal" autoComplete="off" value={f.threshold} aria-invalid={bad("threshold")} onInput={(e) => set("threshold", e.currentTarget.value)} />
          <FieldError err={a.error} name="threshold" />
        </Field>
      )}
      <Field label="For" for="alert-for" hint="A duration: 30s, 5m, 1h; at most 7 days.">
        <input id="alert-for" autoComplete="off" spellcheck={false} value={f.for} aria-invalid={bad("for")} onInput={(e) => set("for", e.currentTarget.value)} />
        <FieldError err={a.error} name="for" />
      </Field>
      {f.kind === "failure_rate_above" && (
        <Field label="Finished jobs needed before the rate counts" for="alert-min-count" hint={`Empty: ${DEFAULT_MIN_COUNT}.`}>
          <input id="alert-min-count" inputMode="numeric" autoComplete="off" value={f.min_count} aria-invalid={bad("min_count")} onInput={(e) => set("min_count", e.currentTarget.value)} />
          <FieldError err={a.error} name="min_count" />
        </Field>
      )}
      <label class="check">
        <input id="alert-enabled" type="checkbox" checked={f.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} />
        Enabled (a disabled rule is not evaluated, and resolves where it fired)
      </label>
      {other && (
        <div class="dialog-error">
          <ErrorBox id="alert-error" error={other} />
        </div>
      )}
      <FormFooter id="alert-save" label={create ? "Create" : "Save"} busy={a.busy} onCancel={props.onClose} />
    </form>
  );
}
