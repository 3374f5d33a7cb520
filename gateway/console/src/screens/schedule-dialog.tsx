// The create/edit dialog of a schedule: every field of the request, and
// the cron expression's next runs in the schedule's time zone, asked of
// the server as the expression or zone changes (the server's cron parser
// is the one that counts, so the browser does not guess).
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, post } from "../api";
import { ago, Dialog, ErrorBox, Field, Loading } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import { loadSchedule, saveSchedule } from "./schedule-api";
import {
  DEFAULT_MAX_RETRIES,
  emptyForm,
  formatRun,
  formOf,
  PRIORITIES,
  requestBody,
  timeZones,
  type FieldError,
  type Schedule,
  type ScheduleForm,
  type SchedulePreview,
} from "./schedule-logic";

/** How long typing must pause before the preview is asked for. */
export const PREVIEW_DEBOUNCE_MS = 300;
const PREVIEW_COUNT = 5;

export function ScheduleDialog(props: {
  open: boolean;
  /** the schedule to edit; null for a new one */
  schedule: Schedule | null;
  /** queue names to suggest */
  queues: string[];
  onClose: () => void;
  onSaved: (s: Schedule) => void;
}) {
  const title = props.schedule ? "Edit schedule " + props.schedule.name : "New schedule";
  return (
    <Dialog open={props.open} title={title} onClose={props.onClose} id="schedule-dialog" wide>
      {props.open && <ScheduleEditor key={props.schedule?.id ?? "new"} {...props} />}
    </Dialog>
  );
}

interface Preview {
  /** the cron and zone it answers for */
  key: string;
  runs?: string[];
  timezone?: string;
  error?: FieldError | { field: "cron" | "timezone" | ""; message: string };
}

const previewKey = (f: ScheduleForm) => f.cron.trim() + "\n" + (f.timezone.trim() || "UTC");

function ScheduleEditor(props: { schedule: Schedule | null; queues: string[]; onClose: () => void; onSaved: (s: Schedule) => void }) {
  const editing = props.schedule;
  const [form, setForm] = useState<ScheduleForm>(() => (editing ? formOf(editing) : emptyForm()));
  const [loading, setLoading] = useState(editing !== null);
  const [loadError, setLoadError] = useState<Error | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [refusal, setRefusal] = useState<{ field: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  // Some 400 zones: built once, so typing does not re-render them.
  const zoneList = useMemo(() => <ZoneList zones={timeZones()} />, []);

  // Edit starts from the stored schedule as the server has it now, payload text included.
  useEffect(() => {
    if (!editing) return;
    let live = true;
    loadSchedule(editing.id).then(
      ({ schedule, rawPayload }) => {
        if (!live) return;
        setForm(formOf(schedule, rawPayload));
        setLoading(false);
      },
      (e: Error) => {
        if (!live) return;
        setLoadError(e);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [editing?.id]);

  const key = previewKey(form);
  useEffect(() => {
    if (loading) return;
    if (!form.cron.trim()) {
      setPreview(null);
      return;
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      const body = { cron: form.cron.trim(), timezone: form.timezone.trim() || "UTC", count: PREVIEW_COUNT };
      post<SchedulePreview>("/api/v1/schedules/preview", body, { signal: ctl.signal }).then(
        (p) => setPreview({ key, runs: p.next_runs, timezone: p.timezone }),
        (e: Error) => {
          if (ctl.signal.aborted) return;
          const field = e instanceof ApiError && (e.field === "cron" || e.field === "timezone") ? e.field : "";
          setPreview({ key, error: { field, message: e.message } });
        },
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [key, loading]);

  const set = <K extends keyof ScheduleForm>(k: K, v: ScheduleForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    if (refusal?.field === k) setRefusal(null);
  };

  // The preview's error holds for the cron and zone it was asked about.
  const cronError = preview && preview.key === key && preview.error ? preview.error : null;

  const save = async () => {
    setRefusal(null);
    const r = requestBody(form);
    if ("error" in r) {
      setRefusal(r.error);
      focusField(r.error.field);
      return;
    }
    // The create would be refused the same way: say so without sending it.
    if (cronError && cronError.field) {
      setRefusal(cronError);
      focusField(cronError.field || "cron");
      return;
    }
    setBusy(true);
    try {
      const saved = await saveSchedule(editing?.id, r.body);
      props.onSaved(saved);
    } catch (e) {
      const err = e as ApiError;
      const field = err.field ?? "";
      setRefusal({ field, message: err.message });
      // The server refused the expression or zone: the preview says so too.
      if (field === "cron" || field === "timezone") setPreview({ key, error: { field, message: err.message } });
    } finally {
      setBusy(false);
    }
  };

  if (loading) return <Loading />;
  const invalid = (f: string) => refusal?.field === f || (cronError?.field === f && (f === "cron" || f === "timezone"));
  const tz = preview?.timezone ?? (form.timezone.trim() || "UTC");
  return (
    <form
      id="schedule-form"
      class="schedule-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy) void save();
      }}
    >
      <ErrorBox error={loadError && "Could not load the schedule as stored now (" + loadError.message + "); editing the list's copy."} />
      <div class="schedule-fields two">
        <Text id="schedule-name" label="Name" value={form.name} onInput={(v) => set("name", v)} invalid={invalid("name")} required />
        <Field label="Queue" for="schedule-queue">
          <input
            id="schedule-queue"
            list="schedule-queues"
            required
            value={form.queue}
            aria-invalid={invalid("queue") || undefined}
            onInput={(e) => set("queue", e.currentTarget.value)}
          />
          <datalist id="schedule-queues">
            {props.queues.map((q) => (
              <option key={q} value={q} />
            ))}
          </datalist>
        </Field>
        <Field label="Cron" for="schedule-cron" hint="minute hour day-of-month month day-of-week, or @hourly, @daily, @every 90s" hintId="schedule-cron-hint">
          <input
            id="schedule-cron"
            class="mono"
            required
            spellcheck={false}
            autoComplete="off"
            placeholder="0 9 * * 1-5"
            value={form.cron}
            aria-invalid={invalid("cron") || undefined}
            aria-describedby="schedule-cron-hint cron-status"
            onInput={(e) => set("cron", e.currentTarget.value)}
          />
        </Field>
        <Field label="Time zone" for="schedule-timezone">
          <input
            id="schedule-timezone"
            list="schedule-timezones"
            required
            spellcheck={false}
            autoComplete="off"
            value={form.timezone}
            aria-invalid={invalid("timezone") || undefined}
            aria-describedby="cron-status"
            onInput={(e) => set("timezone", e.currentTarget.value)}
          />
          {zoneList}
        </Field>
      </div>

      <div id="cron-status" class="cron-status" aria-live="polite">
        {cronError ? (
          <ErrorBox id="cron-error" data-field={cronError.field} error={cronError.message} />
        ) : preview?.runs && preview.key === key ? (
          <Runs runs={preview.runs} tz={tz} />
        ) : form.cron.trim() ? (
          <p class="muted">Checking the expression…</p>
        ) : (
          <p class="muted">Type a cron expression to see its next runs.</p>
        )}
      </div>

      <Field label="Payload (JSON, optional)" for="schedule-payload">
        <textarea
          id="schedule-payload"
          spellcheck={false}
          value={form.payload}
          aria-invalid={invalid("payload") || undefined}
          onInput={(e) => set("payload", e.currentTarget.value)}
        />
      </Field>
      <div class="schedule-fields">
        <Field label="Priority" for="schedule-priority">
          <select id="schedule-priority" value={form.priority} onChange={(e) => set("priority", e.currentTarget.value)}>
            <Options choices={PRIORITIES} />
          </select>
        </Field>
        <Text id="schedule-unique-key" label="Unique key (optional)" value={form.unique_key} onInput={(v) => set("unique_key", v)} invalid={invalid("unique_key")} />
        <Field label="Max retries" for="schedule-max-retries">
          <input
            id="schedule-max-retries"
            type="number"
            min={0}
            max={1000}
            step={1}
            inputMode="numeric"
            value={form.max_retries}
            placeholder={`queue's default (${DEFAULT_MAX_RETRIES} unless it sets one)`}
            aria-invalid={invalid("max_retries") || undefined}
            onInput={(e) => set("max_retries", e.currentTarget.value)}
          />
        </Field>
        <label class="check schedule-enabled" for="schedule-enabled">
          <input id="schedule-enabled" type="checkbox" checked={form.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} />
          Enabled
        </label>
      </div>

      {refusal && <ErrorBox id="schedule-error" data-field={refusal.field} error={refusal.message} />}
      <FormFooter id="schedule-save" busy={busy} onCancel={props.onClose} label={busy ? "Saving…" : editing ? "Save" : "Create"} />
    </form>
  );
}

function Text(props: { id: string; label: string; value: string; onInput: (v: string) => void; invalid?: boolean; required?: boolean }) {
  return (
    <Field label={props.label} for={props.id}>
      <input
        id={props.id}
        required={props.required}
        value={props.value}
        aria-invalid={props.invalid || undefined}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </Field>
  );
}

function ZoneList({ zones }: { zones: string[] }) {
  return (
    <datalist id="schedule-timezones">
      {zones.map((z) => (
        <option key={z} value={z} />
      ))}
    </datalist>
  );
}

function Runs({ runs, tz }: { runs: string[]; tz: string }) {
  if (runs.length === 0) return <p class="muted">This expression matches no future time.</p>;
  return (
    <div class="cron-preview">
      <h3>Next runs ({tz})</h3>
      <ol id="cron-preview">
        {runs.map((at) => (
          <li key={at} data-at={at}>
            <RunAt at={at} tz={tz} relClass="muted" />
          </li>
        ))}
      </ol>
    </div>
  );
}

/** RunAt shows a run time in the schedule's zone (the viewer's own time as its title), and how far off it is. */
export function RunAt({ at, tz, relClass = "muted rel" }: { at: string | null; tz: string; relClass?: string }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <>
      <time dateTime={at} title={"Your time: " + new Date(at).toLocaleString()}>
        {formatRun(at, tz)}
      </time>{" "}
      <span class={relClass}>{ago(at)}</span>
    </>
  );
}

function focusField(field: string) {
  const id = { name: "schedule-name", queue: "schedule-queue", cron: "schedule-cron", timezone: "schedule-timezone", payload: "schedule-payload", unique_key: "schedule-unique-key", max_retries: "schedule-max-retries", priority: "schedule-priority" }[field];
  if (id) document.getElementById(id)?.focus();
}
