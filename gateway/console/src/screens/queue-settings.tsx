// The queue detail's settings dialogs: concurrency, throttle, defaults and
// description. Each form sends what was typed and lets the server judge
// it: a 400 shows in the dialog naming its field, and nothing changes.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { del, enc, get, post, put } from "../api";
import { Dialog, ErrorBox, useAsync } from "../components/ui";
import {
  concurrencyBody,
  DEFAULT_FIELDS,
  defaultsBody,
  defaultsForm,
  errorField,
  errorText,
  specOf,
  throttleBody,
  type DefaultsForm,
  type Queue,
  type QueueDefaults,
} from "./queue-lib";

export type SettingsDialog = "concurrency" | "throttle" | "defaults" | "description";

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
      <Dialog id="throttle-dialog" open={open === "throttle"} title="Rate limit (throttle)" onClose={props.onClose}>
        <ThrottleForm {...rest} />
      </Dialog>
      <Dialog id="defaults-dialog" open={open === "defaults"} title="Job defaults" onClose={props.onClose} wide>
        <DefaultsFormView {...rest} />
      </Dialog>
      <Dialog id="description-dialog" open={open === "description"} title="Description" onClose={props.onClose}>
        <DescriptionForm {...rest} />
      </Dialog>
    </>
  );
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
      <div class="dialog-footer">
        {props.extra}
        <button type="button" onClick={props.onClose} disabled={props.busy}>
          Cancel
        </button>
        <button type="submit" id={props.id + "-save"} class="primary" disabled={props.busy}>
          {props.busy ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}

/** invalid marks the input the server's error names (its field, with or without a "defaults." prefix). */
function invalid(err: Error | null, ...names: string[]): true | undefined {
  const f = errorField(err);
  return f && names.some((n) => f === n || f.endsWith("." + n)) ? true : undefined;
}

function ConcurrencyForm({ q, onClose, onSaved }: Props) {
  const [max, setMax] = useState(q.concurrency === null ? "" : String(q.concurrency));
  const a = useAsync();
  const save = (fn: () => Promise<Queue>) =>
    a.run(async () => {
      onSaved(await fn());
      onClose();
    });
  return (
    <Form
      id="concurrency-form"
      error={a.error}
      busy={a.busy}
      onClose={onClose}
      onSubmit={() => save(() => post<Queue>(path(q, "concurrency"), concurrencyBody(max)))}
      extra={
        q.concurrency !== null && (
          <button type="button" class="dialog-extra" id="concurrency-remove" disabled={a.busy} onClick={() => save(() => del<Queue>(path(q, "concurrency")))}>
            Remove limit
          </button>
        )
      }
    >
      <p class="muted">At most this many of the queue's jobs are active at once, across all workers (1: one at a time). Leave empty for no limit.</p>
      <label class="field" for="concurrency-max">
        <span class="label">Max active jobs</span>
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
      </label>
    </Form>
  );
}

function ThrottleForm({ q, onClose, onSaved }: Props) {
  const [rate, setRate] = useState(q.throttle ? String(q.throttle.rate) : "");
  const [period, setPeriod] = useState(q.throttle ? q.throttle.period : "1m");
  const a = useAsync();
  const save = (fn: () => Promise<Queue>) =>
    a.run(async () => {
      onSaved(await fn());
      onClose();
    });
  return (
    <Form
      id="throttle-form"
      error={a.error}
      busy={a.busy}
      onClose={onClose}
      onSubmit={() => save(() => post<Queue>(path(q, "throttle"), throttleBody(rate, period)))}
      extra={
        q.throttle && (
          <button type="button" class="dialog-extra" id="throttle-remove" disabled={a.busy} onClick={() => save(() => del<Queue>(path(q, "throttle")))}>
            Remove throttle
          </button>
        )
      }
    >
      <p class="muted">Workers get at most this many of the queue's jobs in any window of the period.</p>
      <div class="dialog-row">
        <label class="field" for="throttle-rate">
          <span class="label">Rate (jobs)</span>
          <input
            id="throttle-rate"
            name="rate"
            inputMode="numeric"
            autoComplete="off"
            value={rate}
            aria-invalid={invalid(a.error, "rate")}
            onInput={(e) => setRate(e.currentTarget.value)}
          />
        </label>
        <label class="field" for="throttle-period">
          <span class="label">Per period</span>
          <input
            id="throttle-period"
            name="period"
            autoComplete="off"
            value={period}
            aria-invalid={invalid(a.error, "period")}
            aria-describedby="throttle-period-hint"
            onInput={(e) => setPeriod(e.currentTarget.value)}
          />
          <span class="hint" id="throttle-period-hint">
            A duration such as 1s, 1m, 1h (1s to 7 days) or a number of seconds.
          </span>
        </label>
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

function DefaultsFormView({ q, onClose, onSaved }: Props) {
  const [f, setF] = useState<DefaultsForm>(() => defaultsForm(q.defaults));
  const a = useAsync();
  return (
    <Form
      id="defaults-form"
      error={a.error}
      busy={a.busy}
      onClose={onClose}
      onSubmit={() =>
        a.run(async () => {
          onSaved(await post<Queue>(path(q, "defaults"), defaultsBody(f)));
          onClose();
        })
      }
    >
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
            <label class="field" for={id} key={k}>
              <span class="label">{label}</span>
              {k === "retry_backoff" ? (
                <select {...common} onChange={common.onInput}>
                  <option value="">no default</option>
                  {["none", "fixed", "linear", "exponential"].map((b) => (
                    <option key={b} value={b}>
                      {b}
                    </option>
                  ))}
                </select>
              ) : (
                <input {...common} autoComplete="off" inputMode={k === "max_retries" ? "numeric" : undefined} placeholder="no default" />
              )}
              {hint && <span class="hint">{hint}</span>}
            </label>
          );
        })}
      </div>
    </Form>
  );
}

function DescriptionForm({ q, onClose, onSaved }: Props) {
  const [text, setText] = useState(q.description);
  const a = useAsync();
  return (
    <Form
      id="description-form"
      error={a.error}
      busy={a.busy}
      onClose={onClose}
      onSubmit={() =>
        a.run(async () => {
          // The description is set only by PUT, which replaces the whole configuration: read the
          // queue again just before and send its other settings as they are, so only the description changes.
          const cur = await get<Queue>(path(q));
          onSaved(await put<Queue>(path(q), specOf(cur, { description: text })));
          onClose();
        })
      }
    >
      <label class="field" for="description-text">
        <span class="label">Description (at most 1,024 characters)</span>
        <textarea
          id="description-text"
          name="description"
          maxLength={1024}
          value={text}
          aria-invalid={invalid(a.error, "description")}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
    </Form>
  );
}
