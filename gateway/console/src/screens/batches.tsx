// Batches: the namespace's batches, newest first, a page at a time
// (GET /api/v1/batches), and one opened by id; a batch's screen has its
// counts, its jobs (searched by batch_id, paged) and its callback.
import { useEffect, useState } from "preact/hooks";
import { enc, isNotFound, post } from "../api";
import { batchPath } from "../lib/paths";
import { useApi, useLiveReload, type JobEvent } from "../hooks";
import { Link, navigate } from "../router";
import { Empty, ErrorBox, KV, Loading, Meter, Missing, Pager, Screen, Stat, StateBadge, Unloaded } from "../components/ui";
import { JobLink, QueueLink } from "../components/links";
import { Table } from "../components/table";
import { between, utc } from "./job-model";
import { BatchJobs } from "./batch-jobs";
import { batchesPath, callbackText, firstPage, turnPage, type Batch, type BatchList, type Pages } from "./flows-lib";
import "./batches.css";

export type { Batch } from "./flows-lib";

/** PAGE: batches on one page of the list. */
const PAGE = 20;

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
  const [pages, setPages] = useState<Pages>(firstPage);
  const list = useApi<BatchList>(batchesPath(PAGE, pages[pages.length - 1]));
  const [open, setOpen] = useState("");
  useLiveReload(list.reload, finishing, 5000);
  const page = list.data;

  return (
    <Screen name="batches" title="Batches" ready={page !== undefined || list.error !== undefined}>
      <section class="card">
        <div class="toolbar">
          <h2 class="batch-h">Batches</h2>
          <button type="button" id="batches-refresh" onClick={list.reload}>
            Refresh
          </button>
        </div>
        <p class="muted">Newest first. A finished batch is removed after the retention period.</p>
        <ErrorBox error={list.error} />
        {page === undefined ? (
          list.error ? null : <Loading />
        ) : page.batches.length === 0 ? (
          <Empty>{pages.length > 1 ? "No more batches." : "No batches in this namespace yet."}</Empty>
        ) : (
          <Table
            id="batches-table"
            cols={["Batch", "Finished", { label: "Pending", num: true }, { label: "Succeeded", num: true }, { label: "Failed", num: true }, "Created", "Callback"]}
          >
            {page.batches.map((b) => (
              <tr key={b.id}>
                <td>
                  <Link href={batchPath(b.id)} class="mono">
                    {b.id}
                  </Link>
                </td>
                <td>
                  <BatchProgress b={b} />
                </td>
                <td class="num">{b.pending}</td>
                <td class="num">{b.succeeded}</td>
                <td class="num">{b.failed}</td>
                <td title={utc(b.created_at)}>{utc(b.created_at)}</td>
                <td class="batch-callback-cell">
                  <span class="mono">{b.callback_queue || "—"}</span> <span class="muted">{callbackText(b)}</span>
                </td>
              </tr>
            ))}
          </Table>
        )}
        {page && (pages.length > 1 || page.has_more) && (
          <Pager label="Pages of batches" page={pages.length} hasNext={page.has_more && !!page.cursor} onPage={(p) => setPages(turnPage(pages, p, page.cursor))} />
        )}
      </section>
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
          A batch's id is in the answer to <code>POST /api/v1/enqueue/batch</code> and on the detail of each of its jobs. A chain's steps are
          shown on the detail of each of its jobs.
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
                      {b.callback_state && (
                        <>
                          {" "}
                          <StateBadge state={b.callback_state} />
                        </>
                      )}
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
