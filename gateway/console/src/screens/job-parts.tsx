// Parts of the job detail: progress, attempts, timeline, and the links of
// a job's flows (batch, chain steps, dependencies).
import { useEffect, useState } from "preact/hooks";
import { enc, get, post } from "../api";
import { useApi } from "../hooks";
import { Link } from "../router";
import { batchPath } from "../lib/paths";
import { JobLink } from "../components/links";
import { Empty, Meter, StateBadge } from "../components/ui";
import { Table } from "../components/table";
import { exact } from "../lib/format";
import { JsonView } from "../components/json";
import { attemptsOf, between, clock, progressOf, timelineText, utc, type Job } from "./job-model";
import type { Batch } from "./batches";

export function ProgressBar({ progress }: { progress: unknown }) {
  const p = progressOf(progress);
  if (!p) return <JsonView value={progress} label="Progress" id="job-progress" />;
  const text = `${exact(p.current)}/${exact(p.total)}`;
  return (
    <div class="job-progress" id="job-progress">
      <Meter
        pct={p.pct ?? 0}
        aria-label="Progress"
        aria-valuemin={0}
        aria-valuemax={p.total > 0 ? p.total : undefined}
        aria-valuenow={p.current}
        aria-valuetext={text + (p.message ? " " + p.message : "")}
      />
      <span class="job-progress-text">
        {text}
        {p.pct !== undefined && <span class="muted"> ({Math.floor(p.pct)}%)</span>}
        {p.message && <span> “{p.message}”</span>}
      </span>
    </div>
  );
}

export function Attempts({ job }: { job: Job }) {
  const rows = attemptsOf(job);
  if (rows.length === 0) return <Empty>No attempt yet.</Empty>;
  return (
    <Table id="job-attempts" cols={[{ label: "#", num: true }, "Started", "Duration", "Worker", "Result"]}>
      {rows.map((r, i) => (
        <tr key={i} data-attempt={r.n}>
          <td class="num">{r.n}</td>
          <td title={r.start ? utc(r.start) : undefined}>{r.start ? clock(r.start) : <span class="muted">—</span>}</td>
          <td>{r.start ? between(r.start, r.end) + (r.outcome === "running" ? "…" : "") : "—"}</td>
          <td class="trunc" title={r.worker}>
            {r.worker ?? <span class="muted">—</span>}
          </td>
          <td class="wrap job-attempt-result">
            {r.error !== undefined ? (
              <>
                <span class={"job-outcome job-outcome-" + r.outcome.replace(" ", "-")}>{r.outcome === "failed" ? "failed" : r.outcome}</span>{" "}
                <span class="job-error">{r.error}</span>
                {r.backtrace && (
                  <details class="job-backtrace">
                    <summary>Backtrace</summary>
                    <pre>{r.backtrace}</pre>
                  </details>
                )}
              </>
            ) : (
              <span class={"job-outcome job-outcome-" + r.outcome.replace(" ", "-")}>{r.outcome}</span>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

export function Timeline({ job }: { job: Job }) {
  const tl = job.timeline ?? [];
  if (tl.length === 0) return <Empty>No timeline.</Empty>;
  let day = "";
  return (
    <ol class="job-timeline" id="job-timeline">
      {tl.map((ev, i) => {
        // The date shows when it changes; the times are UTC with milliseconds.
        const d = ev.at.slice(0, 10);
        const showDay = d !== day;
        day = d;
        return (
          <li key={i} data-event={ev.event}>
            <time dateTime={ev.at} title={utc(ev.at)}>
              {showDay && <span class="muted">{d} </span>}
              {clock(ev.at)}
            </time>
            <span class="job-tl-text">{timelineText(ev)}</span>
          </li>
        );
      })}
      {tl.length >= 100 && <li class="muted">The timeline keeps a job's last 100 entries.</li>}
    </ol>
  );
}

/** BatchLink names the job's batch and how far it is. */
export function BatchLink({ id }: { id: string }) {
  const b = useApi<Batch>(`/api/v1/batches/${enc(id)}`);
  return (
    <>
      <Link href={batchPath(id)} id="job-batch">
        {id}
      </Link>
      {b.data && (
        <span class="muted">
          {" "}
          ({b.data.succeeded + b.data.failed} of {b.data.total} finished)
        </span>
      )}
    </>
  );
}

interface Found {
  id: string;
  state: string;
}

type Page = { jobs: (Job & { chain_id: string | null; chain_step: number | null })[] };

/** msWindow is the [t, t + 1 ms) window around an instant, in whole milliseconds (the search's windows are half-open). */
function msWindow(at: string): { after: string; before: string } {
  const t = Math.floor(Date.parse(at));
  return { after: new Date(t).toISOString(), before: new Date(t + 1).toISOString() };
}

/**
 * findStep looks for step `step` of chain `chain` among the jobs a search
 * finds. The API names a step's chain and index but not its neighbours'
 * ids; a next step is created in the same command that completes its
 * previous one, so their times match to the nanosecond and a one-
 * millisecond window finds it.
 */
async function findStep(filter: Record<string, unknown>, chain: string, step: number, signal: AbortSignal): Promise<Found | null> {
  const page = await post<Page>("/api/v1/jobs/search", { ...filter, limit: 100 }, { signal });
  const j = page.jobs.find((x) => x.chain_id === chain && x.chain_step === step);
  return j ? { id: j.id, state: j.state } : null;
}

/** ChainLinks shows a chain step's previous and next steps. */
export function ChainLinks({ job }: { job: Job }) {
  const chain = job.chain_id!;
  const step = job.chain_step ?? 0;
  const [prev, setPrev] = useState<Found | null | undefined>(undefined);
  const [next, setNext] = useState<Found | null | undefined>(undefined);
  useEffect(() => {
    const ctl = new AbortController();
    const settle = (set: (f: Found | null) => void) => (p: Promise<Found | null>) =>
      p.then(
        (f) => !ctl.signal.aborted && set(f),
        () => !ctl.signal.aborted && set(null),
      );
    if (step > 0 && job.created_at) {
      const w = msWindow(job.created_at);
      const filter = { state: ["completed"], completed_after: w.after, completed_before: w.before, created_before: w.before };
      settle(setPrev)(findStep(filter, chain, step - 1, ctl.signal));
    } else setPrev(null);
    if (job.state === "completed" && job.completed_at) {
      const w = msWindow(job.completed_at);
      settle(setNext)(findStep({ created_after: w.after, created_before: w.before }, chain, step + 1, ctl.signal));
    } else setNext(null);
    return () => ctl.abort();
  }, [job.id, job.state, job.completed_at]);
  const link = (f: Found, n: number, rel: string) => (
    <JobLink job={f.id} id={"job-chain-" + rel}>
      step {n + 1}: {f.id}
    </JobLink>
  );
  return (
    <span class="job-chain">
      <span class="mono">{chain}</span>, step {step + 1}
      {step > 0 && (
        <span>
          {" · previous: "}
          {prev === undefined ? "…" : prev ? link(prev, step - 1, "prev") : <span class="muted">not found (retried later, or pruned)</span>}
        </span>
      )}
      {job.state === "completed" && (
        <span>
          {" · next: "}
          {next === undefined ? "…" : next ? link(next, step + 1, "next") : <span class="muted">none (the last step, or the chain stopped)</span>}
        </span>
      )}
    </span>
  );
}

/** DependsOn links the jobs this one waits for, with their states. */
export function DependsOn({ ids }: { ids: string[] }) {
  const [states, setStates] = useState<Record<string, string>>({});
  useEffect(() => {
    const ctl = new AbortController();
    // At most MaxDependsOn (100) ids; the first 20 get their state.
    for (const id of ids.slice(0, 20)) {
      get<Job>(`/api/v1/jobs/${enc(id)}`, { signal: ctl.signal }).then(
        (j) => setStates((s) => ({ ...s, [id]: j.state })),
        () => !ctl.signal.aborted && setStates((s) => ({ ...s, [id]: "gone" })),
      );
    }
    return () => ctl.abort();
  }, [ids.join(",")]);
  return (
    <ul class="job-deps" id="job-deps">
      {ids.map((id) => (
        <li key={id}>
          <JobLink job={id} />{" "}
          {states[id] && states[id] !== "gone" ? <StateBadge state={states[id]} /> : states[id] === "gone" ? <span class="muted">(not found)</span> : null}
        </li>
      ))}
    </ul>
  );
}
