// Parts of the job detail: progress, attempts, timeline, and the links of
// a job's flows (batch, chain steps, dependencies).
import { useEffect, useState } from "preact/hooks";
import { enc, get } from "../api";
import { useApi } from "../hooks";
import { Link } from "../router";
import { batchPath } from "../lib/paths";
import { JobLink, QueueLink } from "../components/links";
import { Empty, ErrorBox, KV, Loading, Meter, StateBadge } from "../components/ui";
import { Table } from "../components/table";
import { exact } from "../lib/format";
import { usdOf } from "../lib/cost";
import { JsonView } from "../components/json";
import { attemptsOf, between, clock, progressOf, timelineText, utc, type Job, type JobUsage } from "./job-model";
import { chainStatus, neighbours, type Batch, type Chain, type ChainStep } from "./flows-lib";

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

/** useChain reads the chain job id is a step of (GET /api/v1/jobs/{id}/chain; id null: none), again whenever tick changes; an answer about another job is not this one's. */
export function useChain(id: string | null, tick: unknown) {
  const c = useApi<Chain>(id ? `/api/v1/jobs/${enc(id)}/chain` : null, [tick]);
  const own = c.data && c.data.steps[c.data.step]?.job_id === id ? c.data : undefined;
  return { ...c, data: own };
}

/** ChainLinks names a chain step's chain and place, and links the steps before and after it. */
export function ChainLinks({ job, chain }: { job: Job; chain: Chain | undefined }) {
  const step = job.chain_step ?? 0;
  const n = chain?.steps.length;
  const { prev, next } = chain ? neighbours(chain) : { prev: null, next: null };
  const link = (s: ChainStep, rel: string) => (
    <JobLink job={s.job_id!} id={"job-chain-" + rel}>
      step {s.step + 1}: {s.job_id}
    </JobLink>
  );
  return (
    <span class="job-chain">
      <span class="mono">{job.chain_id}</span>, step {step + 1}
      {n !== undefined && <> of {n}</>}
      {prev && <span>{" · previous: "}{link(prev, "prev")}</span>}
      {next && <span>{" · next: "}{link(next, "next")}</span>}
    </span>
  );
}

/** ChainSteps is where a chain stands: each step in order, with its queue, its job and that job's state. */
export function ChainSteps({ job, chain, error }: { job: Job; chain: Chain | undefined; error?: Error }) {
  if (!chain) return error ? <ErrorBox error={error} /> : <Loading />;
  return (
    <>
      <p id="job-chain-status">{chainStatus(chain)}</p>
      <Table id="job-chain-steps" caption="The steps of the chain" cols={[{ label: "Step", num: true }, "Queue", "Job", "State", "Completed"]}>
        {chain.steps.map((s) => (
          <tr key={s.step} data-step={s.step} aria-current={s.job_id === job.id ? "step" : undefined} class={s.job_id === job.id ? "chain-this" : undefined}>
            <td class="num">{s.step + 1}</td>
            <td>
              <QueueLink queue={s.job_queue ?? s.queue} />
            </td>
            <td>
              {s.job_id === job.id ? (
                <span class="mono">this job</span>
              ) : s.job_id ? (
                <JobLink job={s.job_id} class="mono" />
              ) : (
                <span class="muted">—</span>
              )}
            </td>
            <td>{s.state ? <StateBadge state={s.state} /> : <span class="muted">not enqueued</span>}</td>
            <td>{s.completed_at ? utc(s.completed_at) : <span class="muted">—</span>}</td>
          </tr>
        ))}
      </Table>
      {(chain.on_failure_queue || chain.on_exit_queue) && (
        <p class="muted" id="job-chain-handlers">
          {chain.on_failure_queue && (
            <>
              If a step dies: a job in <QueueLink queue={chain.on_failure_queue} />.{" "}
            </>
          )}
          {chain.on_exit_queue && (
            <>
              If a step stops the chain: a job in <QueueLink queue={chain.on_exit_queue} />.
            </>
          )}
        </p>
      )}
    </>
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

/** UsageFields are a job's model usage: tokens by kind (a kind not reported reads 0), cost exactly, the last model and provider named. */
export function UsageFields({ usage: u }: { usage: JobUsage }) {
  return (
    <dl class="kv job-usage">
      <KV k="Cost" id="job-usage-cost">
        {usdOf(u.cost_usd)}
      </KV>
      <KV k="Input tokens" id="job-usage-input">
        {exact(u.input_tokens ?? 0)}
      </KV>
      <KV k="Output tokens" id="job-usage-output">
        {exact(u.output_tokens ?? 0)}
      </KV>
      <KV k="Cache read tokens" id="job-usage-cache-read">
        {exact(u.cache_read_tokens ?? 0)}
      </KV>
      <KV k="Cache write tokens" id="job-usage-cache-write">
        {exact(u.cache_write_tokens ?? 0)}
      </KV>
      <KV k="Model" id="job-usage-model">
        {u.model ? <span class="mono">{u.model}</span> : <span class="muted">—</span>}
      </KV>
      <KV k="Provider" id="job-usage-provider">
        {u.provider ? <span class="mono">{u.provider}</span> : <span class="muted">—</span>}
      </KV>
    </dl>
  );
}
