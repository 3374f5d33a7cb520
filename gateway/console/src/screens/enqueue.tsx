// The top bar's "Enqueue job" button and its dialog: POST /api/v1/enqueue
// with the fields of wire.EnqueueRequest a person would set by hand. The
// payload is checked as JSON before sending; the server's refusal is shown
// as it says it.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { errorField, post } from "../api";
import { JobLink } from "../components/links";
import { Dialog, useAsync } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import { PRIORITIES } from "../filters";
import { buildRequest, emptyForm, type EnqueueForm } from "./job-enqueue";
import { QueuePicker } from "./job-queuepicker";
import "./enqueue.css";

interface Enqueued {
  job_id: string;
  status: string;
  unique_existing: boolean;
}

export function EnqueueButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" id="enqueue-open" class="primary" onClick={() => setOpen(true)} aria-haspopup="dialog" aria-label="Enqueue job" title="Enqueue job">
        <span aria-hidden="true">+</span>
        <span class="enqueue-long"> Enqueue job</span>
      </button>
      <Dialog open={open} title="Enqueue a job" onClose={() => setOpen(false)} id="enqueue-dialog" wide>
        <EnqueueFormView onClose={() => setOpen(false)} />
      </Dialog>
    </>
  );
}

function FieldError({ id, msg }: { id: string; msg?: string }) {
  if (!msg) return null;
  return (
    <span class="field-error" id={id} role="alert">
      {msg}
    </span>
  );
}

function Labelled(props: { id: string; label: string; hint?: string; error?: string; children: ComponentChildren }) {
  // The error sits outside the <label>, so it is described, not part of the control's name.
  return (
    <div class="field">
      <label class="label" for={props.id}>
        {props.label}
      </label>
      {props.children}
      {props.hint && <span class="hint">{props.hint}</span>}
      <FieldError id={props.id + "-error"} msg={props.error} />
    </div>
  );
}

function EnqueueFormView({ onClose }: { onClose: () => void }) {
  const [f, setF] = useState<EnqueueForm>(emptyForm);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<Enqueued | null>(null);
  const { busy, error, setError, run } = useAsync();
  const set = <K extends keyof EnqueueForm>(k: K) => (v: EnqueueForm[K]) => {
    setF((old) => ({ ...old, [k]: v }));
    if (errors[k]) setErrors((e) => ({ ...e, [k]: "" }));
  };
  const inp = (k: keyof EnqueueForm) => ({
    id: "enqueue-" + k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()),
    value: f[k],
    "aria-invalid": errors[k] ? true : undefined,
    "aria-describedby": errors[k] ? "enqueue-" + k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()) + "-error" : undefined,
    onInput: (e: { currentTarget: { value: string } }) => set(k)(e.currentTarget.value as never),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(null);
    setError(null);
    const r = buildRequest(f);
    if (r.errors) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    await run(async () => setDone(await post<Enqueued>("/api/v1/enqueue", r.req)));
  };
  const serverField = errorField(error) ?? "";

  return (
    <form id="enqueue-form" class="enqueue-form" onSubmit={submit} noValidate>
      <div class="enqueue-grid">
        <div class="enqueue-main">
          <QueuePicker id="enqueue-queue" label="Queue" value={f.queue} onChange={set("queue")} />
          <FieldError id="enqueue-queue-error" msg={errors.queue} />
          <Labelled id="enqueue-payload" label="Payload (JSON)" error={errors.payload} hint="Any JSON value; empty sends no payload.">
            <textarea {...inp("payload")} spellcheck={false} rows={8} />
          </Labelled>
          <Labelled id="enqueue-tags" label="Tags" error={errors.tags} hint="One key=value per line.">
            <textarea {...inp("tags")} class="enqueue-tags" spellcheck={false} rows={3} placeholder="tenant=acme" />
          </Labelled>
        </div>
        <div class="enqueue-side">
          <Labelled id="enqueue-priority" label="Priority">
            <select {...inp("priority")} onChange={(e) => set("priority")(e.currentTarget.value)}>
              <option value="">Default (normal)</option>
              <Options choices={PRIORITIES} />
            </select>
          </Labelled>
          <Labelled id="enqueue-max-retries" label="Max retries" error={errors.maxRetries} hint="Empty: the queue's default.">
            <input {...inp("maxRetries")} type="number" min={0} max={1000} step={1} inputMode="numeric" />
          </Labelled>
          <Labelled id="enqueue-when" label="Run">
            <select {...inp("when")} onChange={(e) => set("when")(e.currentTarget.value as EnqueueForm["when"])}>
              <option value="now">Now</option>
              <option value="delay">After a delay</option>
              <option value="at">At a time</option>
            </select>
          </Labelled>
          {f.when === "delay" && (
            <Labelled id="enqueue-delay" label="Delay" error={errors.delay} hint="30s, 5m, 1h30m, 2d">
              <input {...inp("delay")} placeholder="5m" autoComplete="off" />
            </Labelled>
          )}
          {f.when === "at" && (
            <Labelled id="enqueue-at" label="Scheduled at (your time zone)" error={errors.at}>
              <input {...inp("at")} type="datetime-local" step={1} />
            </Labelled>
          )}
          <Labelled id="enqueue-unique-key" label="Unique key" error={errors.uniqueKey} hint="No second job with this key while one exists.">
            <input {...inp("uniqueKey")} autoComplete="off" spellcheck={false} />
          </Labelled>
          {f.uniqueKey.trim() && (
            <Labelled id="enqueue-unique-period" label="Unique for" error={errors.uniquePeriod} hint="1h, 30m or seconds; empty: while it exists.">
              <input {...inp("uniquePeriod")} autoComplete="off" />
            </Labelled>
          )}
          <details class="enqueue-more">
            <summary>More options</summary>
            <Labelled id="enqueue-backoff" label="Retry backoff">
              <select {...inp("backoff")} onChange={(e) => set("backoff")(e.currentTarget.value)}>
                <option value="">Default</option>
                <Options choices={["exponential", "linear", "fixed", "none"]} />
              </select>
            </Labelled>
            <Labelled id="enqueue-expire-after" label="Expire if not started within" error={errors.expireAfter} hint="10m, 1h or seconds">
              <input {...inp("expireAfter")} autoComplete="off" />
            </Labelled>
            <Labelled id="enqueue-concurrency-key" label="Concurrency key" error={errors.concurrencyKey} hint="Counts against the queue's concurrency per key.">
              <input {...inp("concurrencyKey")} autoComplete="off" spellcheck={false} />
            </Labelled>
            <Labelled id="enqueue-fairness-key" label="Fairness key" error={errors.fairnessKey} hint="Workers take the queue's fairness keys in turn.">
              <input {...inp("fairnessKey")} autoComplete="off" spellcheck={false} />
            </Labelled>
          </details>
        </div>
      </div>
      {error && (
        <div class="error" id="enqueue-error" role="alert">
          {serverField && <strong>{serverField}: </strong>}
          {error.message}
        </div>
      )}
      {done && (
        // The link closes the dialog as it navigates (Link keeps its own click handler; this one sees the bubble).
        <p class="notice" id="enqueue-result" role="status" onClick={(e) => (e.target as HTMLElement).closest("a") && onClose()}>
          {done.unique_existing ? "A job with this unique key exists already: " : "Enqueued "}
          <JobLink job={done.job_id} /> ({done.status}).
        </p>
      )}
      <FormFooter id="enqueue-submit" busy={busy} onCancel={onClose} cancelLabel="Close" label={busy ? "Enqueuing…" : "Enqueue"} />
    </form>
  );
}
