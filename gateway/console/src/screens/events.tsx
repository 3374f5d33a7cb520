// Live events: the namespace's event stream as it happens, newest first.
// It keeps the last EVENT_ROWS events in memory; Pause holds arrivals
// aside (counting them) so the table can be read, Resume puts them on top.
// Events may come by the hundred a second, so the table re-renders at
// most every FLUSH_MS rather than once per event.
import { useEffect, useRef, useState } from "preact/hooks";
import { Badge, Empty, Field, num, Screen, StateBadge } from "../components/ui";
import { Options } from "../components/forms";
import { Table } from "../components/table";
import { useEvents, useStreamState, type JobEvent } from "../hooks";
import { setParam, useLocation } from "../router";
import { useSession } from "../session";
import { JobLink, QueueLink } from "../components/links";
import type { StreamState } from "../sse";
import { clock, EVENT_ROWS, EVENT_TYPES, EventLog, eventMatches, type EventFilter } from "./dashboard-lib";
import "./events.css";

const FLUSH_MS = 100;

const stateText: Record<StreamState, string> = {
  open: "connected",
  connecting: "connecting…",
  retrying: "reconnecting…",
  stopped: "stopped",
};

export function Events() {
  const { can } = useSession();
  if (!can("job.read"))
    return (
      <Screen name="events" title="Live events" ready={true}>
        <p class="muted">This key's role may not read the namespace's jobs or their events.</p>
      </Screen>
    );
  return <LiveEvents />;
}

function LiveEvents() {
  const loc = useLocation();
  const filter: EventFilter = { queue: loc.query.get("queue") ?? "", type: loc.query.get("type") ?? "" };
  const log = useRef(new EventLog()).current;
  const [, setVersion] = useState(0);
  const timer = useRef<number | undefined>(undefined);
  const stream = useStreamState();
  const [opened, setOpened] = useState(stream === "open");

  const rerender = () => {
    clearTimeout(timer.current);
    timer.current = undefined;
    setVersion((v) => v + 1);
  };
  useEvents((e) => {
    log.push(e);
    if (timer.current === undefined) timer.current = window.setTimeout(rerender, FLUSH_MS);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  useEffect(() => {
    if (stream === "open") setOpened(true);
  }, [stream]);

  const matches = (e: JobEvent) => eventMatches(e, filter);
  const rows = log.rows.filter(matches);
  const held = log.paused ? log.heldMatching(matches) : 0;

  return (
    <Screen
      name="events"
      title="Live events"
      ready={opened}
      actions={
        <>
          <Badge class={"events-state events-state-" + stream} glyph="●" id="events-stream" data-state={stream} role="status" aria-label={"Stream " + stateText[stream]}>
            {stateText[stream]}
          </Badge>
          <button
            type="button"
            id="events-pause"
            class={log.paused ? "primary" : undefined}
            onClick={() => {
              if (log.paused) log.resume();
              else log.pause();
              rerender();
            }}
          >
            {log.paused ? "Resume" : "Pause"}
          </button>
          <button
            type="button"
            id="events-clear"
            onClick={() => {
              log.clear();
              rerender();
            }}
          >
            Clear
          </button>
        </>
      }
    >
      <div class="events-toolbar" role="search" aria-label="Filter events">
        <Field label="Queue" for="events-queue">
          <input id="events-queue" type="search" placeholder="Any queue" value={filter.queue} onInput={(e) => setParam("queue", e.currentTarget.value)} />
        </Field>
        <Field label="Type" for="events-type">
          <select id="events-type" value={filter.type} onChange={(e) => setParam("type", e.currentTarget.value)}>
            <option value="">Any</option>
            <Options choices={EVENT_TYPES} />
          </select>
        </Field>
        <p class="muted events-note" aria-live="polite">
          {log.paused ? (
            <span id="events-new" class="events-new">
              Paused: {num(held)} new
            </span>
          ) : (
            `The newest ${EVENT_ROWS} events are kept.`
          )}
        </p>
      </div>
      {rows.length === 0 ? (
        <Empty>
          {log.rows.length === 0 ? "Waiting for events: they show here as jobs are enqueued, run and finish." : "No event kept matches the filters."}
        </Empty>
      ) : (
        <Table id="events-table" class="events-table" cols={["Time", "Type", "Job", "Queue", "From → state", { label: "Attempt", num: true }, "Worker"]}>
          {rows.map((e, i) => (
            <EventRow key={e.seq ?? `${e.job_id}-${e.type}-${e.at}-${i}`} e={e} />
          ))}
        </Table>
      )}
    </Screen>
  );
}

function EventRow({ e }: { e: JobEvent }) {
  return (
    <tr data-job={e.job_id} data-type={e.type}>
      <td class="mono">
        <time dateTime={e.at} title={e.at}>
          {clock(e.at)}
        </time>
      </td>
      <td>{e.type}</td>
      <td class="mono">
        <JobLink job={e.job_id} />
      </td>
      <td>
        <QueueLink queue={e.queue} />
      </td>
      <td>
        {e.from && (
          <span class="muted">
            {e.from} <span aria-hidden="true">→</span>
            <span class="sr-only">to</span>{" "}
          </span>
        )}
        <StateBadge state={e.state} />
      </td>
      <td class="num">{e.attempt || <span class="muted">—</span>}</td>
      <td class="mono">{e.worker_id || <span class="muted">—</span>}</td>
    </tr>
  );
}
