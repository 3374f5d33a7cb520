// Batches: the API keeps no list of them (GET /api/v1/batches/{id} only),
// so the list screen opens one by id and shows those of the most recently
// created jobs; a batch's screen has its counts, its jobs (searched by
// batch_id, paged) and its callback.
import { useEffect, useMemo, useState } from "preact/hooks";
import { enc, get, isNotFound, post } from "../api";
import { batchPath } from "../lib/paths";
import { useApi, useLiveReload, usePostQuery, type JobEvent } from "../hooks";
import { Link, navigate } from "../router";
import { Empty, ErrorBox, KV, Loading, Meter, Missing, Screen, Stat, StateBadge, Unloaded } from "../components/ui";
import { JobLink, QueueLink } from "../components/links";
import { Table } from "../components/table";
import { between, utc } from "./job-model";
import { BatchJobs } from "./batch-jobs";
import "./batches.css";

export interface Batch {
  id: string;
  total: number;
  pending: number;
  succeeded: number;
  failed: number;
  callback_queue: string;
  callback_job_id: string | null;
  created_at: string | null;
  completed_at: string | null;
}

/** RECENT_JOBS: how many of the newest jobs the list looks through for batch ids. */
const RECENT_JOBS = 200;
/** RECENT_BATCHES: at most this many batches listed. */
const RECENT_BATCHES = 20;
const RECENT_SEARCH = { limit: RECENT_JOBS, sort: "created_at", order: "desc" };

// A batch's counts change when one of its jobs finishes: these events may be one.
const finishing = (e: JobEvent) => e.type === "completed" || e.type === "dead" || e.type === "cancelled" || e.type === "retried";

export function BatchProgress({ b, id }: { b: Batch; id?: string }) {
  const done = b.succeeded + b.failed;
  const pct = b.total > 0 ? (done / b.total) * 100 : 0;
  return (
    <div class="batch-progress" id={id}>
      <Meter pct={pct} aria-label="Jobs finished" aria-valuemin={0} aria-valuemax={b.total} aria-valuenow={done} aria-valuetext={`${done} of ${b.total} finished`} />
      <span class="batch-progress-text">
        {done}/{b.total}
      </span>
    </div>
  );
}

export function Batches() {
  const recent = usePostQuery<{ jobs: { batch_id: string | null }[] }>("/api/v1/jobs/search", RECENT_SEARCH);
  const failed = recent.error !== undefined;
  // The last answer's batches, kept through a failed refresh; none when the first search fails.
  const ids = useMemo(() => {
    if (!recent.data) return failed ? [] : null;
    const seen: string[] = [];
    for (const j of recent.data.jobs) if (j.batch_id && !seen.includes(j.batch_id) && seen.length < RECENT_BATCHES) seen.push(j.batch_id);
    return seen;
  }, [recent.data, !recent.data && failed]);
  const [batches, setBatches] = useState<Record<string, Batch | Error>>({});
  const [counts, setCounts] = useState(0);
  const [open, setOpen] = useState("");

  useEffect(() => {
    if (!ids?.length) return;
    const ctl = new AbortController();
    for (const id of ids)
      get<Batch>(`/api/v1/batches/${enc(id)}`, { signal: ctl.signal }).then(
        (b) => setBatches((m) => ({ ...m, [id]: b })),
        (e: Error) => !ctl.signal.aborted && setBatches((m) => ({ ...m, [id]: e })),
      );
    return () => ctl.abort();
  }, [ids, counts]);
  useLiveReload(() => setCounts((c) => c + 1), finishing, 5000);

  return (
    <Screen name="batches" title="Batches" ready={ids !== null}>
      <section class="card">
        <h2>Open a batch</h2>
        <form
          class="toolbar"
          id="batch-open-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (open.trim()) navigate(batchPath(open.trim()));
          }}
        >
          <label for="batch-id" class="sr-only">
            Batch id
          </label>
          <input id="batch-id" class="batch-id-input" placeholder="batch_01HX…" value={open} onInput={(e) => setOpen(e.currentTarget.value)} autoComplete="off" spellcheck={false} />
          <button type="submit" id="batch-open" class="primary" disabled={!open.trim()}>
            Open
          </button>
        </form>
        <p class="muted">
          A batch's id is in the answer to <code>POST /api/v1/enqueue/batch</code> and on the detail of each of its jobs.
        </p>
      </section>
      <section class="card">
        <div class="toolbar">
          <h2 class="batch-h">Recent batches</h2>
          <button type="button" id="batches-refresh" onClick={recent.reload}>
            Refresh
          </button>
        </div>
        <p class="muted">Jobbie keeps no list of batches: these are the batches of the {RECENT_JOBS} most recently created jobs.</p>
        <ErrorBox error={recent.error} />
        {ids === null ? (
          <Loading />
        ) : ids.length === 0 ? (
          <Empty>No batch among the most recent jobs.</Empty>
        ) : (
          <Table
            id="batches-table"
            cols={["Batch", "Finished", { label: "Pending", num: true }, { label: "Succeeded", num: true }, { label: "Failed", num: true }, "Created", "Callback"]}
          >
            {ids.map((id) => {
              const b = batches[id];
              return (
                <tr key={id}>
                  <td>
                    <Link href={batchPath(id)} class="mono">
                      {id}
                    </Link>
                  </td>
                  {b === undefined ? (
                    <td colSpan={6} class="muted">
                      Loading…
                    </td>
                  ) : b instanceof Error ? (
                    <td colSpan={6} class="muted">
                      {b.message}
                    </td>
                  ) : (
                    <>
                      <td>
                        <BatchProgress b={b} />
                      </td>
                      <td class="num">{b.pending}</td>
                      <td class="num">{b.succeeded}</td>
                      <td class="num">{b.failed}</td>
                      <td title={utc(b.created_at)}>{utc(b.created_at)}</td>
                      <td class="mono">{b.callback_queue || "—"}</td>
                    </>
                  )}
                </tr>
              );
            })}
          </Table>
        )}
      </section>
      <section class="card">
        <h2>Chains</h2>
        <p class="muted" id="chains-note">
          Chains have no screen of their own: each step is a job. A step's job detail shows its chain and step, with links to the previous and
          next steps.
        </p>
      </section>
    </Screen>
  );
}

const STATES = ["pending", "scheduled", "held", "active", "retrying", "completed", "dead", "cancelled"];

/** useStateCounts counts a batch's jobs in each state (one search of one job per state; a batch has at most 1,000 jobs). */
function useStateCounts(id: string, tick: number): Record<string, { n: number; exact: boolean }> | null {
  const [counts, setCounts] = useState<Record<string, { n: number; exact: boolean }> | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    Promise.all(
      STATES.map((s) =>
        post<{ total: number; total_exact: boolean }>("/api/v1/jobs/search", { batch_id: id, state: [s], limit: 1 }, { signal: ctl.signal }).then(
          (p) => [s, { n: p.total, exact: p.total_exact }] as const,
        ),
      ),
    ).then(
      (rs) => setCounts(Object.fromEntries(rs)),
      () => {},
    );
    return () => ctl.abort();
  }, [id, tick]);
  return counts;
}

export function BatchDetail({ id }: { id: string }) {
  const { data, error, reload } = useApi<Batch>(`/api/v1/batches/${enc(id)}`);
  const b = data?.id === id ? data : undefined;
  const [tick, setTick] = useState(0);
  const [state, setState] = useState("");
  const counts = useStateCounts(id, tick);
  useLiveReload(
    () => {
      reload();
      setTick((t) => t + 1);
    },
    (e) => finishing(e) || e.type === "started" || e.type === "failed",
    2000,
  );
  if (isNotFound(error, true))
    return (
      <Missing name="batch" title={"Batch " + id} id="batch-not-found" message={<>Batch {id} not found in this namespace.</>}>
        <p class="muted">A finished batch is removed with its jobs after the retention period.</p>
        <Link href="/batches">All batches</Link>
      </Missing>
    );
  if (!b) return <Unloaded name="batch" title={"Batch " + id} error={error} />;
  return (
    <Screen name="batch" title={"Batch " + b.id} ready={true}>
      {error && <ErrorBox error={error} />}
      <div class="grid">
        <section class="card">
          <h2>Progress</h2>
          <BatchProgress b={b} id="batch-progress" />
          <div class="stats batch-stats">
            <Stat value={b.total} label="jobs" />
            <Stat value={b.pending} label="unfinished" />
            <Stat value={b.succeeded} label="succeeded" />
            <Stat value={b.failed} label="failed (dead or cancelled)" />
          </div>
          <p class="muted">A job counts at its first finish; retrying it later does not change these counts.</p>
        </section>
        <section class="card">
          <h2>Details</h2>
          <dl class="kv">
            <KV k="Created">{utc(b.created_at)}</KV>
            <KV k="Completed">
              {b.completed_at ? (
                <>
                  {utc(b.completed_at)} <span class="muted">(took {between(b.created_at, b.completed_at)})</span>
                </>
              ) : (
                <span class="muted">not yet</span>
              )}
            </KV>
            <KV k="Callback" id="batch-callback">
              {b.callback_queue ? (
                <>
                  queue <QueueLink queue={b.callback_queue} />
                  {b.callback_job_id ? (
                    <>
                      {": job "}
                      <JobLink job={b.callback_job_id} class="mono" />
                    </>
                  ) : (
                    <span class="muted"> (enqueued once every job has finished)</span>
                  )}
                </>
              ) : (
                <span class="muted">none</span>
              )}
            </KV>
          </dl>
        </section>
      </div>
      <section class="card">
        <h2>Jobs by state</h2>
        {counts === null ? (
          <Loading />
        ) : (
          <ul class="batch-states" id="batch-states">
            {STATES.filter((s) => counts[s]?.n).map((s) => (
              <li key={s}>
                <button type="button" class="link" aria-pressed={state === s} onClick={() => setState(state === s ? "" : s)} aria-label={`Show the ${s} jobs`}>
                  <StateBadge state={s} /> {counts[s].n}
                  {!counts[s].exact && "+"}
                </button>
              </li>
            ))}
            {STATES.every((s) => !counts[s]?.n) && <li class="muted">No jobs left: they may have been pruned after their retention period.</li>}
          </ul>
        )}
      </section>
      <BatchJobs key={b.id + "/" + state} id={b.id} state={state} onState={setState} tick={tick} />
    </Screen>
  );
}
