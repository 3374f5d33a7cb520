// Workers: every worker seen in the namespace lately, with what it works
// on. A job starting or ending changes a worker's active jobs, so those
// events reload the list (at most once a second).
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { Empty, ErrorBox, Field, num, Screen, Stat } from "../components/ui";
import { ShowAll, Table } from "../components/table";
import { settled, useApi, useLiveReload, useTick } from "../hooks";
import { setParam, useLocation } from "../router";
import { useSession } from "../session";
import { JobLink, QueueLink } from "../components/links";
import { WorkerSeen } from "./dashboard-cards";
import { changesActiveJobs, matchWorker, sortWorkers, type Worker } from "./dashboard-lib";
import "./dashboard.css";
import "./workers.css";

/** WORKER_ROWS bounds the rows rendered before "show all"; JOB_LINKS the active job ids linked per worker. */
const WORKER_ROWS = 200;
const JOB_LINKS = 3;

export function Workers() {
  const { can } = useSession();
  const allowed = can("queue.read");
  const loc = useLocation();
  const q = loc.query.get("q") ?? "";
  const status = loc.query.get("status") ?? "";
  const [showAll, setShowAll] = useState(false);
  const list = useApi<{ workers: Worker[] }>(allowed ? "/api/v1/workers" : null);
  useLiveReload(list.reload, changesActiveJobs);
  useTick(10_000); // keeps "last seen" current

  const all = list.data ? sortWorkers(list.data.workers ?? []) : [];
  const matched = all.filter((w) => matchWorker(w, q, status));
  const rows = showAll ? matched : matched.slice(0, WORKER_ROWS);
  const active = all.filter((w) => w.status === "active").length;
  const ready = !allowed || settled(list);

  return (
    <Screen name="workers" title="Workers" ready={ready}>
      {!allowed && <p class="muted">This key's role may not list the namespace's workers.</p>}
      <ErrorBox error={list.error} />
      {list.data && (
        <>
          <div class="card">
            <div class="stats">
              <Stat stat="active" value={num(active)} label="active" />
              <Stat stat="gone" value={num(all.length - active)} label="gone (unseen for 2 minutes)" />
              <Stat stat="jobs" value={num(all.reduce((n, w) => n + (w.active_jobs || 0), 0))} label="active jobs" />
            </div>
          </div>
          <div class="filters" role="search" aria-label="Filter workers">
            <Field label="Filter" for="worker-filter">
              <input id="worker-filter" type="search" placeholder="Worker id, host or queue" value={q} onInput={(e) => setParam("q", e.currentTarget.value)} />
            </Field>
            <Field label="Status" for="worker-status">
              <select id="worker-status" value={status} onChange={(e) => setParam("status", e.currentTarget.value)}>
                <option value="">Any</option>
                <option value="active">Active</option>
                <option value="gone">Gone</option>
              </select>
            </Field>
          </div>
          {all.length === 0 ? (
            <Empty>No worker has fetched in this namespace lately. A worker shows here from its first fetch.</Empty>
          ) : matched.length === 0 ? (
            <Empty>No worker matches the filter.</Empty>
          ) : (
            <>
              <Table id="workers-table" cols={["Worker", "Host", "Queues", "Active jobs", "Last seen", "Status"]}>
                {rows.map((w) => (
                  <WorkerRow key={w.id} w={w} />
                ))}
              </Table>
              <p class="muted dash-count" id="workers-count" aria-live="polite">
                {rows.length < matched.length ? `Showing ${num(rows.length)} of ${num(matched.length)} workers. ` : `${num(matched.length)} of ${num(all.length)} workers. `}
                <ShowAll id="workers-show-all" showAll={showAll} onToggle={setShowAll} matched={matched.length} limit={WORKER_ROWS} />
              </p>
            </>
          )}
        </>
      )}
    </Screen>
  );
}

function WorkerRow({ w }: { w: Worker }) {
  const ids = w.active_job_ids ?? [];
  const more = w.active_jobs - Math.min(ids.length, JOB_LINKS);
  return (
    <tr data-worker={w.id}>
      <td class="mono wrap">{w.id}</td>
      <td class="wrap">{w.hostname || <span class="muted">—</span>}</td>
      <td class="wrap">
        {(w.queues ?? []).length === 0 ? (
          <span class="muted">—</span>
        ) : (
          (w.queues ?? []).map((q, i) => (
            <Fragment key={q}>
              {i > 0 && ", "}
              <QueueLink queue={q} />
            </Fragment>
          ))
        )}
      </td>
      <td>
        <div class="workers-jobs">
          <span class="num" data-col="active-jobs">
            {num(w.active_jobs)}
          </span>
          {ids.slice(0, JOB_LINKS).map((id) => (
            <JobLink key={id} job={id} class="mono" />
          ))}
          {more > 0 && ids.length > 0 && <span class="muted">+{num(more)} more</span>}
        </div>
      </td>
      <WorkerSeen w={w} />
    </tr>
  );
}
