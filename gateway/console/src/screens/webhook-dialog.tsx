// The Webhooks screens' dialogs: create or edit an endpoint (a 400 shows in
// the dialog naming its field, and nothing changes), and rotate its secret.
// A secret made by a create or a rotation is shown once, in the dialog,
// and forgotten when it closes.
import { useState } from "preact/hooks";
import { errorField, post, put } from "../api";
import { ErrorBox, Field, useAsync } from "../components/ui";
import { FormFooter, ItemDialog } from "../components/forms";
import { SecretShown } from "./key-secret";
import { errorText } from "./queue-lib";
import { toggleEvent, WEBHOOK_EVENTS, webhookBody, webhookForm, webhookPath, type Webhook, type WebhookForm } from "./webhooks-lib";

/** The dialog's item: a new endpoint ("new") or the endpoint edited. */
export type WebhookTarget = "new" | Webhook;

export function WebhookDialog(props: { target: WebhookTarget | null; onClose: () => void; onSaved: (w: Webhook, created: boolean) => void }) {
  const t = props.target;
  return (
    <ItemDialog item={t} id="webhook-dialog" title={t === "new" ? "New webhook endpoint" : "Edit webhook endpoint"} onClose={props.onClose} wide>
      {(w) => <WebhookFormView target={w} onClose={props.onClose} onSaved={props.onSaved} />}
    </ItemDialog>
  );
}

/** invalid marks an input the server's error names ("events[1]" marks the events). */
function invalid(err: Error | null, name: string): true | undefined {
  const f = errorField(err);
  return f && (f === name || f.startsWith(name + "[")) ? true : undefined;
}

function WebhookFormView(props: { target: WebhookTarget; onClose: () => void; onSaved: (w: Webhook, created: boolean) => void }) {
  const create = props.target === "new";
  const [f, setF] = useState<WebhookForm>(() => webhookForm(props.target === "new" ? null : props.target));
  const [made, setMade] = useState<Webhook | null>(null);
  const a = useAsync();
  const set = <K extends keyof WebhookForm>(k: K, v: WebhookForm[K]) => setF({ ...f, [k]: v });

  if (made?.secret) {
    return (
      <SecretShown
        intro={
          <>
            Endpoint <strong class="mono">{made.id}</strong> was created with a secret: its deliveries carry a <code>v1</code> HMAC-SHA256 signature with it,
            beside the namespace’s <code>v1a</code> keys.
          </>
        }
        secret={made.secret}
        onDone={() => props.onSaved(made, true)}
      />
    );
  }

  const submit = () =>
    a.run(async () => {
      const body = webhookBody(f, create);
      const w = props.target === "new" ? await post<Webhook>("/api/v1/webhooks", body) : await put<Webhook>(webhookPath(props.target.id), body);
      if (w.secret) setMade(w);
      else props.onSaved(w, create);
    });

  return (
    <form
      id="webhook-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Field label="Endpoint URL (https)" for="webhook-url">
        <input
          id="webhook-url"
          type="url"
          autoComplete="off"
          spellcheck={false}
          placeholder="https://hooks.example.com/jobbie"
          value={f.url}
          aria-invalid={invalid(a.error, "url")}
          onInput={(e) => set("url", e.currentTarget.value)}
        />
      </Field>
      <fieldset class="webhook-events" aria-invalid={invalid(a.error, "events")}>
        <legend>Events</legend>
        <label class="check">
          <input id="webhook-all-events" type="checkbox" checked={f.all} onChange={(e) => set("all", e.currentTarget.checked)} />
          Every event type, present and future
        </label>
        {!f.all && (
          <div class="webhook-event-list">
            {WEBHOOK_EVENTS.map((ev) => (
              <label class="check" key={ev.name}>
                <input type="checkbox" data-event={ev.name} checked={f.events.includes(ev.name)} onChange={(e) => setF(toggleEvent(f, ev.name, e.currentTarget.checked))} />
                <span class="mono">{ev.name}</span> <span class="muted">{ev.label}</span>
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <Field label="Queues" for="webhook-queues" hint="One a line: a name, a prefix ending in * (emails.*), or *. Empty: every queue.">
        <textarea id="webhook-queues" rows={3} spellcheck={false} value={f.queues} aria-invalid={invalid(a.error, "queues")} onInput={(e) => set("queues", e.currentTarget.value)} />
      </Field>
      <Field label="Description" for="webhook-description">
        <input id="webhook-description" autoComplete="off" value={f.description} aria-invalid={invalid(a.error, "description")} onInput={(e) => set("description", e.currentTarget.value)} />
      </Field>
      <label class="check">
        <input id="webhook-enabled" type="checkbox" checked={f.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} />
        Enabled{!create && props.target !== "new" && props.target.disabled ? " (saving enables an endpoint disabled for failing again)" : ""}
      </label>
      {create && (
        <label class="check">
          <input id="webhook-secret" type="checkbox" checked={f.secret} onChange={(e) => set("secret", e.currentTarget.checked)} />
          Make a secret (whsec_…) that signs beside the namespace’s keys: shown once
        </label>
      )}
      {a.error && (
        <div class="dialog-error">
          <ErrorBox id="webhook-error" error={errorText(a.error)} />
        </div>
      )}
      <FormFooter id="webhook-save" label={create ? "Create" : "Save"} busy={a.busy} onCancel={props.onClose} />
    </form>
  );
}

/** WebhookRotate asks, then rotates endpoint target's secret and shows the new one once. */
export function WebhookRotate(props: { target: Webhook | null; onClose: () => void; onRotated: (w: Webhook) => void }) {
  return (
    <ItemDialog item={props.target} id="webhook-rotate-dialog" title="Rotate the endpoint’s secret" onClose={props.onClose}>
      {(w) => <RotateForm w={w} onClose={props.onClose} onRotated={props.onRotated} />}
    </ItemDialog>
  );
}

function RotateForm(props: { w: Webhook; onClose: () => void; onRotated: (w: Webhook) => void }) {
  const [rotated, setRotated] = useState<Webhook | null>(null);
  const a = useAsync();
  if (rotated?.secret) {
    return (
      <SecretShown intro={<>The endpoint has a new secret.</>} secret={rotated.secret} onDone={() => props.onRotated(rotated)}>
        <p class="muted">Its older secrets go on signing beside it for 24 hours, so the handler can move to the new one.</p>
      </SecretShown>
    );
  }
  return (
    <form
      id="webhook-rotate-form"
      onSubmit={(e) => {
        e.preventDefault();
        a.run(async () => setRotated(await post<Webhook>(webhookPath(props.w.id) + "/rotate-secret")));
      }}
    >
      <p>
        Make a new secret for <span class="mono">{props.w.url}</span>? It is shown once. The endpoint’s older secrets go on signing beside it for 24 hours.
      </p>
      <ErrorBox error={a.error} />
      <FormFooter id="webhook-rotate-ok" label="Rotate secret" busy={a.busy} onCancel={props.onClose} />
    </form>
  );
}
