// The queue detail's settings dialogs: concurrency, throttle, defaults,
// description and push delivery. Each form sends what was typed and lets the server judge
// it: a 400 shows in the dialog naming its field, and nothing changes.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { del, enc, errorField, get, post, put } from "../api";
import { Dialog, ErrorBox, Field, useAsync } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import {
  concurrencyBody,
  DEFAULT_FIELDS,
  defaultsBody,
  defaultsForm,
  errorText,
  keyConcurrencyChange,
  PUSH_MODES,
  pushChange,
  pushForm,
  specOf,
  throttleBody,
  type DefaultsForm,
  type PushForm,
  type Queue,
  type QueueDefaults,
} from "./queue-lib";

export type SettingsDialog = "concurrency" | "key-concurrency" | "throttle" | "defaults" | "description" | "push";

interface Props {
  q: Queue;
  onClose: () => void;
  /** called with the queue as the server answered it after a change */
  onSaved: (q: Queue) => void;
}

const path = (q: Queue, action = "") => "/api/v1/queues/" + enc(q.name) + (action ? "/" + action : "");

/** SettingsDialogs shows the dialog named by open (null: none). */
export function SettingsDialogs(props: Props & { open: SettingsDialog | null }) {
  const { open, ...rest } = props;
  return (
    <>
      <Dialog id="concurrency-dialog" open={open === "concurrency"} title="Concurrency limit" onClose={props.onClose}>
        <ConcurrencyForm {...rest} />
      </Dialog>
      <Dialog id="key-concurrency-dialog" open={open === "key-concurrency"} title="Concurrency per key" onClose={props.onClose}>
        <KeyConcurrencyForm {...rest} />
      </Dialog>
      <Dialog id="throttle-dialog" open={open === "throttle"} title="Rate limit (throttle)" onClose={props.onClose}>
        <ThrottleForm {...rest} />
      </Dialog>
      <Dialog id="defaults-dialog" open={open === "defaults"} title="Job defaults" onClose={props.onClose} wide>
        <DefaultsFormView {...rest} />
      </Dialog>
      <Dialog id="description-dialog" open={open === "description"} title="Description" onClose={props.onClose}>
        <DescriptionForm {...rest} />
      </Dialog>
      <Dialog id="push-dialog" open={open === "push"} title="Push delivery" onClose={props.onClose} wide>
        <PushFormView {...rest} />
      </Dialog>
    </>
  );
}

/** useSave runs one change at a time: the queue the server answers is saved and the dialog closed; a refusal stays in it. */
function useSave({ onClose, onSaved }: Props) {
  const a = useAsync();
  const save = (change: () => Promise<Queue>) =>
    a.run(async () => {
      onSaved(await change());
      onClose();
    });
  return { ...a, save };
}

/** Form is a dialog's form: submit with Enter or the save button, the server's error above the buttons. */
function Form(props: {
  id: string;
  error: Error | null;
  busy: boolean;
  onSubmit: () => void;
  onClose: () => void;
  children: ComponentChildren;
  extra?: ComponentChildren;
}) {
  return (
    <form
      id={props.id}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
      {props.error && (
        <div class="dialog-error">
          <ErrorBox error={errorText(props.error)} />
        </div>
      )}
      <FormFooter id={props.id + "-save"} busy={props.busy} onCancel={props.onClose} extra={props.extra} label={props.busy ? "Saving…" : "Save"} />
    </form>
  );
}

/** Remove is a dialog's button that takes the setting away. */
function Remove(props: { id: string; busy: boolean; onClick: () => void; children: ComponentChildren }) {
  return (
    <button type="button" class="dialog-extra" id={props.id} disabled={props.busy} onClick={props.onClick}>
      {props.children}
    </button>
  );
}

/** invalid marks the input the server's error names (its field, with or without a "defaults." prefix). */
function invalid(err: Error | null, ...names: string[]): true | undefined {
  const f = errorField(err);
  return f && names.some((n) => f === n || f.endsWith("." + n)) ? true : undefined;
}

function ConcurrencyForm(props: Props) {
  const { q } = props;
  const [max, setMax] = useState(q.concurrency === null ? "" : String(q.concurrency));
  const a = useSave(props);
  return (
    <Form
      id="concurrency-form"
      error={a.error}
      busy={a.busy}
      onClose={props.onClose}
      onSubmit={() => a.save(() => post<Queue>(path(q, "concurrency"), concurrencyBody(max)))}
      extra={
        q.concurrency !== null && (
          <Remove id="concurrency-remove" busy={a.busy} onClick={() => a.save(() => del<Queue>(path(q, "concurrency")))}>
            Remove limit
          </Remove>
        )
      }
    >
      <p class="muted">At most this many of the queue's jobs are active at once, across all workers (1: one at a time). Leave empty for no limit.</p>
      <Field label="Max active jobs" for="concurrency-max">
        <input
          id="concurrency-max"
          name="max"
          inputMode="numeric"
          autoComplete="off"
          value={max}
          placeholder="no limit"
          aria-invalid={invalid(a.error, "max", "concurrency")}
          onInput={(e) => setMax(e.currentTarget.value)}
        />
      </Field>
    </Form>
  );
}

/** putChange sends the queue's whole configuration with one change: the per-key cap and the description are set only by
 * PUT, which replaces every setting, so the queue is read again just before and its other settings sent as they are. */
export async function putChange(q: Queue, change: Parameters<typeof specOf>[1]): Promise<Queue> {
  return put<Queue>(path(q), specOf(await get<Queue>(path(q)), change));
}

function KeyConcurrencyForm(props: Props) {
  const { q } = props;
  const [max, setMax] = useState(q.key_concurrency ? String(q.key_concurrency.max) : "");
  const a = useSave(props);
  return (
    <Form
      id="key-concurrency-form"
      error={a.error}
      busy={a.busy}
      onClose={props.onClose}
      onSubmit={() => a.save(() => putChange(q, keyConcurrencyChange(max)))}
      extra={
        q.key_concurrency && (
          <Remove id="key-concurrency-remove" busy={a.busy} onClick={() => a.save(() => putChange(q, { key_concurrency: null }))}>
            Remove cap
          </Remove>
        )
      }
    >
      <p class="muted">
        At most this many of the queue's jobs with the same concurrency_key are active at once (1 to 10,000). Jobs without a concurrency_key are not
        capped by it. Leave empty for no cap.
      </p>
      <Field label="Max active jobs per key" for="key-concurrency-max">
        <input
          id="key-concurrency-max"
          name="max"
          inputMode="numeric"
          autoComplete="off"
          value={max}
          placeholder="no limit"
          aria-invalid={invalid(a.error, "max", "key_concurrency")}
          onInput={(e) => setMax(e.currentTarget.value)}
        />
      </Field>
    </Form>
  );
}

function ThrottleForm(props: Props) {
  const { q } = props;
  const [rate, setRate] = useState(q.throttle ? String(q.throttle.rate) : "");
  const [period, setPeriod] = useState(q.throttle ? q.throttle.period : "1m");
  const a = useSave(props);
  return (
    <Form
      id="throttle-form"
      error={a.error}
      busy={a.busy}
      onClose={props.onClose}
      onSubmit={() => a.save(() => post<Queue>(path(q, "throttle"), throttleBody(rate, period)))}
      extra={
        q.throttle && (
          <Remove id="throttle-remove" busy={a.busy} onClick={() => a.save(() => del<Queue>(path(q, "throttle")))}>
            Remove throttle
          </Remove>
        )
      }
    >
      <p class="muted">Workers get at most this many of the queue's jobs in any window of the period.</p>
      <div class="dialog-row">
        <Field label="Rate (jobs)" for="throttle-rate">
          <input
            id="throttle-rate"
            name="rate"
            inputMode="numeric"
            autoComplete="off"
            value={rate}
            aria-invalid={invalid(a.error, "rate")}
            onInput={(e) => setRate(e.currentTarget.value)}
          />
        </Field>
        <Field label="Per period" for="throttle-period" hint="A duration such as 1s, 1m, 1h (1s to 7 days) or a number of seconds." hintId="throttle-period-hint">
          <input
            id="throttle-period"
            name="period"
            autoComplete="off"
            value={period}
            aria-invalid={invalid(a.error, "period")}
            aria-describedby="throttle-period-hint"
            onInput={(e) => setPeriod(e.currentTarget.value)}
          />
        </Field>
      </div>
    </Form>
  );
}

const defaultLabels: Record<keyof QueueDefaults, [string, string]> = {
  max_retries: ["Max retries", "retries after the first attempt (0 to never retry)"],
  retry_backoff: ["Retry backoff", ""],
  retry_base_delay: ["Retry base delay", "e.g. 30s"],
  retry_max_delay: ["Retry max delay", "at least the base delay"],
  lease_duration: ["Lease duration", "for fetches that ask none"],
  expire_after: ["Expire after", "a job not started by then is dead (expired)"],
  retention: ["Retention", "how long finished jobs are kept"],
};

function DefaultsFormView(props: Props) {
  const [f, setF] = useState<DefaultsForm>(() => defaultsForm(props.q.defaults));
  const a = useSave(props);
  return (
    <Form id="defaults-form" error={a.error} busy={a.busy} onClose={props.onClose} onSubmit={() => a.save(() => post<Queue>(path(props.q, "defaults"), defaultsBody(f)))}>
      <p class="muted">What the queue's new jobs get for the fields their producer leaves out. Empty: no queue default. Saving replaces every default.</p>
      <div class="filters">
        {DEFAULT_FIELDS.map((k) => {
          const [label, hint] = defaultLabels[k];
          const id = "defaults-" + k.replace(/_/g, "-");
          const common = {
            id,
            name: k,
            value: f[k],
            "aria-invalid": invalid(a.error, k),
            onInput: (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value }),
          };
          return (
            <Field label={label} for={id} key={k} hint={hint}>
              {k === "retry_backoff" ? (
                <select {...common} onChange={common.onInput}>
                  <option value="">no default</option>
                  <Options choices={["none", "fixed", "linear", "exponential"]} />
                </select>
              ) : (
                <input {...common} autoComplete="off" inputMode={k === "max_retries" ? "numeric" : undefined} placeholder="no default" />
              )}
            </Field>
          );
        })}
      </div>
    </Form>
  );
}

function DescriptionForm(props: Props) {
  const { q } = props;
  const [text, setText] = useState(q.description);
  const a = useSave(props);
  return (
    <Form
      id="description-form"
      error={a.error}
      busy={a.busy}
      onClose={props.onClose}
      onSubmit={() => a.save(() => putChange(q, { description: text }))}
    >
      <Field label="Description (at most 1,024 characters)" for="description-text">
        <textarea
          id="description-text"
          name="description"
          maxLength={1024}
          value={text}
          aria-invalid={invalid(a.error, "description")}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </Field>
    </Form>
  );
}

/** PushFormView makes the queue a push queue or changes its push settings (saving enables push again after a 410), or
 * makes it a pull queue. */
function PushFormView(props: Props) {
  const { q } = props;
  const [f, setF] = useState<PushForm>(() => pushForm(q.push));
  const a = useSave(props);
  const field = (k: keyof PushForm) => ({
    id: "push-" + k.replace(/_/g, "-"),
    name: k,
    value: f[k],
    "aria-invalid": invalid(a.error, "push." + k),
    onInput: (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value }),
  });
  return (
    <Form
      id="push-form"
      error={a.error}
      busy={a.busy}
      onClose={props.onClose}
      onSubmit={() => a.save(() => putChange(q, pushChange(f)))}
      extra={
        q.push && (
          <Remove id="push-remove" busy={a.busy} onClick={() => a.save(() => putChange(q, { push: null }))}>
            Make it a pull queue
          </Remove>
        )
      }
    >
      <p class="muted">
        Jobbie POSTs each job, signed with the namespace’s signing keys, to this HTTPS URL; a 2xx answer completes it, another fails the attempt. Its
        other settings stay as they are.
      </p>
      <Field label="Handler URL (https)" for="push-url">
        <input {...field("url")} type="url" autoComplete="off" spellcheck={false} placeholder="https://hooks.example.com/jobs" />
      </Field>
      <div class="dialog-row">
        <Field label="Mode" for="push-mode">
          <select {...field("mode")} onChange={field("mode").onInput}>
            <Options choices={[...PUSH_MODES]} />
          </select>
        </Field>
        <Field label="Timeout" for="push-timeout" hint="1s to 15m">
          <input {...field("timeout")} autoComplete="off" />
        </Field>
        <Field label="Max in flight" for="push-max-in-flight" hint="1 to 1,000">
          <input {...field("max_in_flight")} inputMode="numeric" autoComplete="off" />
        </Field>
      </div>
      <Field label="Headers sent with every delivery" for="push-headers" hint="One “Name: value” a line, e.g. Authorization: Bearer …">
        <textarea {...field("headers")} spellcheck={false} rows={3} />
      </Field>
    </Form>
  );
}
