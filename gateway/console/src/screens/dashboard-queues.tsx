// The dashboard's queues: totals across the namespace, and a table of the
// queues by name. A namespace may have a thousand queues, so the table
// renders the first DEFAULT_QUEUE_ROWS unless asked for all, and a filter
// box narrows it; the first few rows carry their last hour's completions.
import { useState } from "preact/hooks";
import { Badge, Empty, num } from "../components/ui";
import { FilterBox } from "../components/forms";
import { NumCell, ShowAll, Table } from "../components/table";
import { Sparkline } from "../components/sparkline";
import { QueueLink } from "../components/links";
import { plural } from "../lib/format";
import { statusGlyph } from "./queue-parts";
import { SPARK_QUEUES, useHourSparks } from "./dashboard-history";
import { DEFAULT_QUEUE_ROWS, perMinute, queueState, totals, visibleQueues, type Queue } from "./dashboard-lib";

// What a stat's name alone does not say. A failed job waits out its
// backoff as retrying; once its retry is due (at once for a zero delay or
// a lost lease) it is pending again, so "retrying" is not every job that
// will be retried.
const hints: Record<string, string> = {
  retrying: "Failed jobs waiting out their retry backoff. A retry that is due is pending again, and counted in Pending.",
};

/** QueueTotals shows the namespace's counts as stats. */
export function QueueTotals(props: { queues: Queue[]; workers?: number }) {
  const t = totals(props.queues);
  const stats: [string, string, string][] = [
    ["queues", "Queues", num(t.queues)],
    ["pending", "Pending", num(t.pending)],
    ["active", "Active", num(t.active)],
    ["scheduled", "Scheduled", num(t.scheduled)],
    ["retrying", "Waiting to retry", num(t.retrying)],
    ["completed", "Completed", num(t.completed)],
    ["dead", "Dead", num(t.dead)],
    ["rate", "Throughput", perMinute(t.rate)],
  ];
  if (props.workers !== undefined) stats.push(["workers", "Workers connected", num(props.workers)]);
  return (
    <div class="card">
      <h2 class="sr-only">Totals</h2>
      <dl class="stats dash-totals" id="dash-totals">
        {stats.map(([k, label, v]) => (
          <div class="stat" key={k} data-stat={k}>
            <dt class="k" title={hints[k]}>{label}</dt>
            <dd class="v">{v}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

const stateGlyph: Record<string, string> = { paused: statusGlyph.paused, draining: statusGlyph.draining, drained: statusGlyph.drained, running: statusGlyph.active };
const COUNT_COLS = ["Pending", "Active", "Completed", "Dead", "Rate"].map((label) => ({ label, num: true }));

export function QueueTable(props: { queues: Queue[] }) {
  const [filter, setFilter] = useState("");
  const [showAll, setShowAll] = useState(false);
  const { rows, matched, hidden } = visibleQueues(props.queues, filter, showAll);
  const total = props.queues.length;
  const hour = useHourSparks(rows.slice(0, SPARK_QUEUES).map((q) => q.name));
  return (
    <section class="card" aria-labelledby="dash-queues-h">
      <div class="dash-head">
        <h2 id="dash-queues-h">Queues</h2>
        {total > 0 && (
          <div class="toolbar">
            <FilterBox id="queue-filter" label="Filter queues by name" class="dash-filter" placeholder="Filter queues…" value={filter} onInput={setFilter} />
            <ShowAll id="queues-show-all" showAll={showAll} onToggle={setShowAll} matched={matched} limit={DEFAULT_QUEUE_ROWS} />
          </div>
        )}
      </div>
      {total === 0 ? (
        <Empty>No queues yet: a queue appears with its first job.</Empty>
      ) : matched === 0 ? (
        <Empty>No queue name contains “{filter.trim()}”.</Empty>
      ) : (
        <>
          <Table id="dash-queues" class="dash-queues" cols={["Queue", ...COUNT_COLS, "Last 5 min", "Last hour", "State"]}>
            {rows.map((q, i) => {
              const st = queueState(q);
              return (
                <tr key={q.name} data-queue={q.name} class={st !== "running" ? "dash-stopped" : undefined}>
                  <th scope="row" class="dash-qname">
                    <QueueLink queue={q.name} />
                  </th>
                  <NumCell col="pending">{num(q.counts.pending)}</NumCell>
                  <NumCell col="active">{num(q.counts.active)}</NumCell>
                  <NumCell col="completed">{num(q.counts.completed)}</NumCell>
                  <NumCell col="dead" class={q.counts.dead > 0 ? "dash-dead" : undefined}>
                    {num(q.counts.dead)}
                  </NumCell>
                  <NumCell col="rate">{perMinute(q.throughput)}</NumCell>
                  <td data-col="spark">
                    <Sparkline values={q.throughput_per_minute} />
                  </td>
                  <td data-col="hour">
                    <HourSpark got={hour[q.name]} listed={i < SPARK_QUEUES} />
                  </td>
                  <td data-col="state">
                    <Badge class={"qstate qstate-" + st} glyph={stateGlyph[st]}>
                      {st}
                    </Badge>
                  </td>
                </tr>
              );
            })}
          </Table>
          <p class="muted dash-count" id="queues-count" aria-live="polite">
            {hidden > 0
              ? `Showing ${num(rows.length)} of ${num(matched)} queues${filter.trim() ? " matching" : ""}.`
              : `${num(matched)} ${plural(matched, "queue")}${filter.trim() ? ` of ${num(total)}` : ""}.`}
          </p>
        </>
      )}
    </section>
  );
}

/** HourSpark is a queue's completions per minute over the last hour: for the first SPARK_QUEUES rows only, so the dashboard asks for a few histories, not a thousand. */
function HourSpark({ got, listed }: { got: number[] | Error | undefined; listed: boolean }) {
  if (!listed)
    return (
      <span class="muted" title={`Shown for the first ${SPARK_QUEUES} queues listed; the queue's page has its history.`}>
        —
      </span>
    );
  if (got instanceof Error)
    return (
      <span class="dash-dead" title={got.message}>
        ⚠ not read
      </span>
    );
  return <Sparkline values={got} label="completed per minute, last hour" width={96} class="spark-hour" />;
}
