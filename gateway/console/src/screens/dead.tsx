// The dead letter: dead jobs of every queue, searched with every filter
// (the state is fixed, the queue is a filter), with bulk retry and delete.
import { useState } from "preact/hooks";
import { useApi, useLiveReload } from "../hooks";
import { setParam, useLocation } from "../router";
import { useSession } from "../session";
import { JobSearch } from "../components/search";
import { Screen } from "../components/ui";
import { exact } from "../lib/format";
import type { Queue, QueueCounts } from "./queue-lib";
import "./dead.css";

const FIXED = { state: ["dead"] };
const TOP = 12; // queues shown in the summary; the search covers them all

/** What the summary reads of each queue. */
type DeadCount = Pick<Queue, "name"> & { counts: Pick<QueueCounts, "dead"> };

export function DeadLetter() {
  const [ready, setReady] = useState(false);
  const { can } = useSession();
  return (
    <Screen name="dead" title="Dead letter" ready={ready}>
      <p class="muted">Jobs that ran out of retries or expired. Retry them, move them or delete them, one by one or in bulk.</p>
      {can("queue.read") && <DeadByQueue />}
      <JobSearch fixed={FIXED} onReady={() => setReady(true)} />
    </Screen>
  );
}

/** DeadByQueue lists the queues holding the most dead jobs; choosing one filters the search by it. */
function DeadByQueue() {
  const loc = useLocation();
  const { data, error, reload } = useApi<{ queues: DeadCount[] }>("/api/v1/queues");
  useLiveReload(reload, (e) => e.state === "dead" || e.from === "dead", 2000);
  if (error || !data) return null;
  const withDead = data.queues.filter((q) => q.counts.dead > 0).sort((a, b) => b.counts.dead - a.counts.dead);
  if (withDead.length === 0) return null;
  const total = withDead.reduce((n, q) => n + q.counts.dead, 0);
  const current = loc.query.get("queue") ?? "";
  const pick = (queue: string) => setParam("queue", queue);
  return (
    <nav class="card dead-queues" aria-label="Dead jobs by queue">
      <h2>Dead jobs by queue</h2>
      <ul class="dead-queue-list">
        <li>
          <button type="button" class="dead-queue" aria-pressed={current === ""} onClick={() => pick("")}>
            All queues <span class="count">{exact(total)}</span>
          </button>
        </li>
        {withDead.slice(0, TOP).map((q) => (
          <li key={q.name}>
            <button type="button" class="dead-queue" data-queue={q.name} aria-pressed={current === q.name} onClick={() => pick(q.name)}>
              {q.name} <span class="count">{exact(q.counts.dead)}</span>
            </button>
          </li>
        ))}
      </ul>
      {withDead.length > TOP && <p class="muted">… and {withDead.length - TOP} more queues with dead jobs: filter by queue below.</p>}
    </nav>
  );
}
