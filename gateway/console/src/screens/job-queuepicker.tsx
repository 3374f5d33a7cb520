// A queue chooser for the move and enqueue dialogs: a <select> of the
// namespace's queues, and "Another queue…" for a name typed in (a queue
// comes into being with its first job, so any valid name will do).
import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { useSession } from "../session";
import { Options } from "../components/forms";
import { Field } from "../components/ui";

export const OTHER = "__other__";

export function QueuePicker(props: { id: string; label: string; value: string; onChange: (q: string) => void; exclude?: string }) {
  const { can } = useSession();
  const [names, setNames] = useState<string[] | null>(null);
  const [other, setOther] = useState(false);
  useEffect(() => {
    // A role that may not list queues (a producer's) still types a name.
    if (!can("queue.read")) {
      setNames([]);
      return;
    }
    const ctl = new AbortController();
    get<{ queues: { name: string }[] }>("/api/v1/queues", { signal: ctl.signal }).then(
      (b) => setNames(b.queues.map((q) => q.name).sort()),
      () => !ctl.signal.aborted && setNames([]),
    );
    return () => ctl.abort();
  }, []);
  const list = (names ?? []).filter((n) => n !== props.exclude);
  const typing = other || (names !== null && list.length === 0);
  const selected = typing ? OTHER : list.includes(props.value) ? props.value : "";
  return (
    <div class="queue-picker">
      <Field label={props.label} for={props.id}>
        <select
          id={props.id}
          value={selected}
          disabled={names === null}
          onChange={(e) => {
            const v = e.currentTarget.value;
            setOther(v === OTHER);
            props.onChange(v === OTHER ? "" : v);
          }}
        >
          <option value="">{names === null ? "Loading queues…" : "Choose a queue…"}</option>
          <Options choices={list} />
          <option value={OTHER}>Another queue…</option>
        </select>
      </Field>
      {typing && (
        <Field label="Queue name" for={props.id + "-name"}>
          <input
            id={props.id + "-name"}
            value={props.value}
            autoComplete="off"
            spellcheck={false}
            placeholder="emails.send"
            onInput={(e) => props.onChange(e.currentTarget.value.trim())}
          />
        </Field>
      )}
    </div>
  );
}
