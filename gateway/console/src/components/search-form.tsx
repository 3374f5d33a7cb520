// The search's filter form: the common filters in view, the rest under
// "More filters". Fields a screen fixes are shown but cannot be changed.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  label,
  PRIORITIES,
  STATES,
  TIME_FIELDS,
  type FilterKey,
  type FormValues,
  type Problems,
  type SearchFilter,
  type TextKey,
  type TimeKey,
} from "../filters";
import { Options } from "./forms";

/** utcOffset writes the viewer's offset from UTC ("UTC+01:00"). */
function utcOffset(d = new Date()): string {
  const m = -d.getTimezoneOffset();
  const a = Math.abs(m);
  return `UTC${m < 0 ? "−" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

// Fields under "More filters": opened by itself when one of them is set.
const MORE: (keyof FormValues)[] = [
  "scheduled_after",
  "scheduled_before",
  "started_after",
  "started_before",
  "completed_after",
  "completed_before",
  "expire_after",
  "expire_before",
  "worker_id",
  "has_errors",
  "batch_id",
  "unique_key",
  "attempt_min",
  "attempt_max",
  "job_id_prefix",
  "concurrency_key",
  "fairness_key",
];

export function SearchForm(props: {
  form: FormValues;
  onChange: (f: FormValues) => void;
  fixed: SearchFilter;
  problems: Problems;
  /** the field the server refused, with its message */
  serverField?: string;
  busy: boolean;
  onSubmit: () => void;
  onReset: () => void;
}) {
  const { form, fixed, problems } = props;
  const set = <K extends keyof FormValues>(k: K, v: FormValues[K]) => props.onChange({ ...form, [k]: v });
  const isFixed = (k: FilterKey) => fixed[k] !== undefined;
  const moreSet = MORE.some((k) => form[k] !== "");
  // Opened by the user or by a filter under it being set; closing it is the user's.
  const [moreOpen, setMoreOpen] = useState(moreSet);
  useEffect(() => {
    if (moreSet) setMoreOpen(true);
  }, [moreSet]);

  const field = (k: FilterKey, control: ComponentChildren, hint?: string, cls?: string) => {
    const problem = problems[k] ?? (props.serverField === k ? "refused by the server: see the message above" : undefined);
    return (
      <div class={"field" + (cls ? " " + cls : "") + (problem ? " invalid" : "")}>
        <label class="label" for={"search-" + k}>
          {label(k)}
        </label>
        {control}
        {hint && !problem && <span class="hint">{hint}</span>}
        {problem && (
          <span class="field-error" id={"search-" + k + "-error"}>
            {problem}
          </span>
        )}
      </div>
    );
  };
  // A control the problem of its field marks and describes.
  const described = (k: FilterKey) => ({ "aria-invalid": problems[k] ? true : undefined, "aria-describedby": problems[k] ? "search-" + k + "-error" : undefined });
  const text = (k: TextKey, placeholder?: string, hint?: string, cls?: string) =>
    field(
      k,
      <input
        id={"search-" + k}
        type="text"
        spellcheck={false}
        autoComplete="off"
        placeholder={placeholder}
        value={isFixed(k) ? String(fixed[k]) : form[k]}
        disabled={isFixed(k)}
        title={isFixed(k) ? "Fixed on this screen" : undefined}
        {...described(k)}
        aria-invalid={problems[k] || props.serverField === k ? true : undefined}
        onInput={(e) => set(k, e.currentTarget.value)}
      />,
      hint,
      cls,
    );
  const time = (k: TimeKey) => field(k, <input id={"search-" + k} type="datetime-local" value={form[k]} {...described(k)} onInput={(e) => set(k, e.currentTarget.value)} />);
  const number = (k: "attempt_min" | "attempt_max") =>
    field(k, <input id={"search-" + k} type="text" inputMode="numeric" value={form[k]} {...described(k)} onInput={(e) => set(k, e.currentTarget.value)} />);
  const stateFixed = isFixed("state");

  return (
    <form
      id="search-form"
      class="card search-form"
      aria-label="Search jobs"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      {stateFixed ? (
        <p class="states-fixed">
          <span class="label">State</span> {(fixed.state as string[]).join(", ")} <span class="muted">(fixed on this screen)</span>
        </p>
      ) : (
        <fieldset class={"states" + (problems.state ? " invalid" : "")}>
          <legend class="label">State</legend>
          {STATES.map((s) => (
            <label key={s} class="check state-check">
              <input
                type="checkbox"
                id={"search-state-" + s}
                checked={form.state.includes(s)}
                onChange={(e) => set("state", e.currentTarget.checked ? [...form.state, s] : form.state.filter((x) => x !== s))}
              />
              {s}
            </label>
          ))}
          {problems.state && <span class="field-error">{problems.state}</span>}
        </fieldset>
      )}
      <div class="filters">
        {text("queue", "emails.send")}
        {field(
          "priority",
          <select id="search-priority" value={form.priority} onChange={(e) => set("priority", e.currentTarget.value)} disabled={isFixed("priority")}>
            <option value="">All</option>
            <Options choices={PRIORITIES} />
          </select>,
        )}
        {field(
          "tags",
          <input
            id="search-tags"
            type="text"
            spellcheck={false}
            placeholder="tenant=acme, tier=gold"
            value={form.tags}
            {...described("tags")}
            onInput={(e) => set("tags", e.currentTarget.value)}
          />,
          "key=value, comma-separated; all must match",
        )}
        {text("payload_contains", "user@example.com")}
        {text("payload_jq", '.template == "welcome"', "a jq condition on the payload", "mono-field")}
        {text("error_contains", "SMTP timeout")}
        {time("created_after")}
        {time("created_before")}
      </div>
      <details class="more-filters" open={moreOpen} onToggle={(e) => setMoreOpen(e.currentTarget.open)}>
        <summary>More filters</summary>
        <div class="filters">
          {TIME_FIELDS.filter((f) => f !== "created").map((f) => [time(`${f}_after`), time(`${f}_before`)])}
          {text("worker_id", "worker-a1b2c3")}
          {field(
            "has_errors",
            <select id="search-has_errors" value={form.has_errors} onChange={(e) => set("has_errors", e.currentTarget.value)}>
              <option value="">Either</option>
              <option value="true">With errors</option>
              <option value="false">Without errors</option>
            </select>,
          )}
          {text("batch_id", "batch_…")}
          {text("unique_key")}
          {number("attempt_min")}
          {number("attempt_max")}
          {text("job_id_prefix", "job_01HX")}
          {text("concurrency_key", "customer-42")}
          {text("fairness_key", "tenant-7")}
        </div>
      </details>
      <div class="search-buttons">
        <span class="hint muted">Times are in your local time ({utcOffset()}).</span>
        <button type="button" id="search-reset" onClick={props.onReset}>
          Reset
        </button>
        <button type="submit" id="search-submit" class="primary" aria-busy={props.busy}>
          Search
        </button>
      </div>
    </form>
  );
}
