// The dashboard's queues: totals across the namespace, and a table of the
// queues by name. A namespace may have a thousand queues, so the table
// renders the first DEFAULT_QUEUE_ROWS unless asked for all, and a filter
// box narrows it.
import { useState } from "preact/hooks";
import { Empty, num } from "../components/ui";
import { Sparkline } from "../components/sparkline";
import { QueueLink } from "../components/links";
import { DEFAULT_QUEUE_ROWS, perMinute, queueState, totals, visibleQueues, type Queue } from "./dashboard-lib";

/** QueueTotals shows the namespace's counts as stats. */
export function QueueTotals(props: { queues: Queue[]; workers?: number }) {
  const t = totals(props.queues);
  const stats: [string, string, string][] = [
    ["queues", "Queues", num(t.queues)],
    ["pending", "Pending", num(t.pending)],
    ["active", "Active", num(t.active)],
    ["scheduled", "Scheduled", num(t.scheduled)],
    ["retrying", "Retrying", num(t.retrying)],
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
            <dt class="k">{label}</dt>
            <dd class="v">{v}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

const stateGlyph: Record<string, string> = { paused: "⏸", draining: "⏬", drained: "⏹", running: "▶" };

export function QueueTable(props: { queues: Queue[] }) {
  const [filter, setFilter] = useState("");
  const [showAll, setShowAll] = useState(false);
  const { rows, matched, hidden } = visibleQueues(props.queues, filter, showAll);
  const total = props.queues.length;
  return (
    <section class="card" aria-labelledby="dash-queues-h">
      <div class="dash-head">
        <h2 id="dash-queues-h">Queues</h2>
        {total > 0 && (
          <div class="toolbar">
            <label class="dash-filter">
              <span class="sr-only">Filter queues by name</span>
              <input id="queue-filter" type="search" placeholder="Filter queues…" aria-label="Filter queues by name" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
            </label>
            {(hidden > 0 || showAll) && matched > DEFAULT_QUEUE_ROWS && (
              <button type="button" id="queues-show-all" class="link" onClick={() => setShowAll(!showAll)}>
                {showAll ? `Show the first ${DEFAULT_QUEUE_ROWS}` : `Show all ${num(matched)}`}
              </button>
            )}
          </div>
        )}
      </div>
      {total === 0 ? (
        <Empty>No queues yet: a queue appears with its first job.</Empty>
      ) : matched === 0 ? (
        <Empty>No queue name contains “{filter.trim()}”.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="data dash-queues" id="dash-queues">
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col" class="num">Pending</th>
                  <th scope="col" class="num">Active</th>
                  <th scope="col" class="num">Completed</th>
                  <th scope="col" class="num">Dead</th>
                  <th scope="col" class="num">Rate</th>
                  <th scope="col">Last 5 min</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((q) => {
                  const st = queueState(q);
                  return (
                    <tr key={q.name} data-queue={q.name} class={st !== "running" ? "dash-stopped" : undefined}>
                      <th scope="row" class="dash-qname">
                        <QueueLink queue={q.name} />
                      </th>
                      <td class="num" data-col="pending">
                        {num(q.counts.pending)}
                      </td>
                      <td class="num" data-col="active">
                        {num(q.counts.active)}
                      </td>
                      <td class="num" data-col="completed">
                        {num(q.counts.completed)}
                      </td>
                      <td class={"num" + (q.counts.dead > 0 ? " dash-dead" : "")} data-col="dead">
                        {num(q.counts.dead)}
                      </td>
                      <td class="num" data-col="rate">
                        {perMinute(q.throughput)}
                      </td>
                      <td data-col="spark">
                        <Sparkline values={q.throughput_per_minute} />
                      </td>
                      <td data-col="state">
                        <span class={"badge qstate qstate-" + st}>
                          <span aria-hidden="true">{stateGlyph[st]}</span> {st}
                        </span>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <p class="muted dash-count" id="queues-count" aria-live="polite">
            {hidden > 0
              ? `Showing ${num(rows.length)} of ${num(matched)} queues${filter.trim() ? " matching" : ""}.`
              : `${num(matched)} ${matched === 1 ? "queue" : "queues"}${filter.trim() ? ` of ${num(total)}` : ""}.`}
          </p>
        </>
      )}
    </section>
  );
}
