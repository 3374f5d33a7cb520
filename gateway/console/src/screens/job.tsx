// The job detail (/console/jobs/<id>): everything GET /api/v1/jobs/{id}
// says about one job, its actions (retry, cancel, move, delete; approve
// and reject for a job a budget holds), and live reloads when the
// namespace's event stream names it.
import { useState } from "preact/hooks";
import { del, enc, isNotFound, post } from "../api";
import { useApi, useInterval, useLiveReload, type JobEvent } from "../hooks";
import { QueueLink } from "../components/links";
import { useSession } from "../session";
import { Confirm, ErrorBox, KV, Missing, Screen, StateBadge, Unloaded, useAsync } from "../components/ui";
import { JsonView } from "../components/json";
import { actionsFor, attemptLabel, between, utc, type Job } from "./job-model";
import { Attempts, BatchLink, ChainLinks, ChainSteps, DependsOn, ProgressBar, Timeline, UsageFields, useChain } from "./job-parts";
import type { Chain } from "./flows-lib";

// A chain's other steps change when their jobs start or finish.
const stepEvent = (e: JobEvent) => e.type === "started" || e.type === "completed" || e.type === "dead" || e.type === "cancelled" || e.type === "enqueued";
import { MoveDialog } from "./job-move";
import "./job.css";

/** PROGRESS_REFRESH: progress and checkpoints arrive by heartbeat, which the event stream does not announce. */
const PROGRESS_REFRESH = 3000;

export function JobDetail({ id }: { id: string }) {
  const { data, error, reload } = useApi<Job>(`/api/v1/jobs/${enc(id)}`);
  // The screen stays mounted from one job to the next (a chain's link): another job's data is not this one's.
  const job = data?.id === id ? data : undefined;
  const [deletedId, setDeletedId] = useState("");
  const deleted = deletedId === id;
  useLiveReload(reload, (e) => e.job_id === id, 500);
  const active = job?.state === "active";
  useInterval(reload, PROGRESS_REFRESH, active && !deleted);
  const chain = useChain(job?.chain_id && !deleted ? id : null, job?.state);
  useLiveReload(chain.reload, (e) => !!job?.chain_id && stepEvent(e), 2000);

  const notFound = isNotFound(error, true);
  if (deleted)
    return (
      <Screen name="job" title={"Job " + id} ready={true}>
        <p class="notice" id="job-deleted" role="status">
          Job {id} was deleted.
        </p>
        {job && <QueueLink queue={job.queue}>Back to queue {job.queue}</QueueLink>}
      </Screen>
    );
  if (notFound)
    return (
      <Missing name="job" title={"Job " + id} id="job-not-found" message={<>Job {id} not found in this namespace.</>}>
        <p class="muted">It may have been deleted, pruned after its retention period, or belong to another namespace.</p>
      </Missing>
    );
  if (!job) return <Unloaded name="job" title={"Job " + id} error={error} />;
  return (
    <Screen name="job" title={"Job " + job.id} ready={true} actions={<Actions job={job} reload={reload} onDeleted={() => setDeletedId(id)} />}>
      {error && <ErrorBox error={error} />}
      <div class="job-layout">
        <section class="card" aria-labelledby="job-fields-h">
          <h2 id="job-fields-h">Details</h2>
          <Fields job={job} chain={chain.data} />
        </section>
        {job.chain_id && (
          <section class="card" aria-labelledby="job-chain-h" id="job-chain-card">
            <h2 id="job-chain-h">Chain</h2>
            <ChainSteps job={job} chain={chain.data} error={chain.error} />
          </section>
        )}
        {job.usage && (
          <section class="card" aria-labelledby="job-usage-h" id="job-usage">
            <h2 id="job-usage-h">Model usage</h2>
            <UsageFields usage={job.usage} />
          </section>
        )}
        {job.progress != null && (
          <section class="card" aria-labelledby="job-progress-h">
            <h2 id="job-progress-h">Progress</h2>
            <ProgressBar progress={job.progress} />
          </section>
        )}
        <section class="card" aria-labelledby="job-payload-h">
          <h2 id="job-payload-h">Payload</h2>
          <JsonView value={job.payload} label="Payload" id="job-payload" />
        </section>
        {job.result != null && (
          <section class="card" aria-labelledby="job-result-h">
            <h2 id="job-result-h">Result</h2>
            <JsonView value={job.result} label="Result" id="job-result" />
          </section>
        )}
        {job.checkpoint != null && (
          <section class="card" aria-labelledby="job-checkpoint-h">
            <h2 id="job-checkpoint-h">Checkpoint</h2>
            <p class="muted">What an attempt saved; the next attempt receives it.</p>
            <JsonView value={job.checkpoint} label="Checkpoint" id="job-checkpoint" />
          </section>
        )}
        <section class="card" aria-labelledby="job-attempts-h">
          <h2 id="job-attempts-h">Attempt history</h2>
          <Attempts job={job} />
        </section>
        <section class="card" aria-labelledby="job-timeline-h">
          <h2 id="job-timeline-h">Timeline</h2>
          <Timeline job={job} />
        </section>
      </div>
    </Screen>
  );
}

function Fields({ job, chain }: { job: Job; chain: Chain | undefined }) {
  const since = job.scheduled_at && job.created_at && job.scheduled_at > job.created_at ? job.scheduled_at : job.created_at;
  const tags = Object.entries(job.tags ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <dl class="kv job-fields">
      <KV k="Queue" id="job-queue">
        <QueueLink queue={job.queue} />
      </KV>
      <KV k="State" id="job-state">
        <StateBadge state={job.state} /> <span class="muted">({attemptLabel(job.attempt, job.max_retries)})</span>
        {job.cancelling && <span class="badge state-cancelled"> cancel requested</span>}
        {job.dead_reason && <span class="muted"> — {job.dead_reason}</span>}
        {job.cancel_reason && <span class="muted"> — {job.cancel_reason}</span>}
        {job.held_reason === "budget" && (
          <span class="muted" id="job-held-budget">
            {" "}
            — held by budget {job.held_budget}
          </span>
        )}
      </KV>
      <KV k="Priority">{job.priority}</KV>
      <KV k="Worker">
        {job.worker ? (
          <>
            <span class="mono">{job.worker.id || "—"}</span>
            {job.worker.hostname && <> on {job.worker.hostname}</>}
          </>
        ) : (
          <span class="muted">—</span>
        )}
      </KV>
      <KV k="Created">{utc(job.created_at)}</KV>
      {job.scheduled_at && job.scheduled_at !== job.created_at && <KV k="Scheduled for">{utc(job.scheduled_at)}</KV>}
      {job.started_at && (
        // started_at is the latest attempt's start: the time it waited is the first attempt's only.
        <KV k={job.attempt > 1 ? "Last started" : "Started"}>
          {utc(job.started_at)} {job.attempt <= 1 && <span class="muted">({between(since, job.started_at)} queue time)</span>}
        </KV>
      )}
      {job.completed_at && (
        <KV k="Completed">
          {utc(job.completed_at)} {job.started_at && <span class="muted">(ran {between(job.started_at, job.completed_at)})</span>}
        </KV>
      )}
      {job.failed_at && <KV k="Last failure">{utc(job.failed_at)}</KV>}
      {job.next_attempt_at && (
        <KV k="Next attempt">
          {utc(job.next_attempt_at)} <span class="muted">(in {between(new Date().toISOString(), job.next_attempt_at)})</span>
        </KV>
      )}
      {job.lease_expires_at && <KV k="Lease expires">{utc(job.lease_expires_at)}</KV>}
      {job.died_at && <KV k="Died">{utc(job.died_at)}</KV>}
      {job.cancelled_at && <KV k="Cancelled">{utc(job.cancelled_at)}</KV>}
      {job.expires_at && (
        <KV k="Expires">
          {utc(job.expires_at)} {job.expire_after && <span class="muted">(unless started within {job.expire_after})</span>}
        </KV>
      )}
      <KV k="Retries">
        up to {job.max_retries}, {job.retry_backoff === "none" ? "no" : job.retry_backoff} backoff
        {job.retry_backoff !== "none" && (
          <span class="muted">
            {" "}
            ({job.retry_base_delay} base, {job.retry_max_delay} max)
          </span>
        )}
      </KV>
      {job.lease_duration && <KV k="Lease">{job.lease_duration}</KV>}
      <KV k="Unique key" id="job-unique">
        {job.unique_key ? (
          <>
            <span class="mono">{job.unique_key}</span>
            {job.unique_period != null && <span class="muted"> (for {job.unique_period}s)</span>}
          </>
        ) : (
          <span class="muted">—</span>
        )}
      </KV>
      {job.concurrency_key && (
        <KV k="Concurrency key" id="job-concurrency-key">
          <span class="mono">{job.concurrency_key}</span>
        </KV>
      )}
      {job.fairness_key && (
        <KV k="Fairness key" id="job-fairness-key">
          <span class="mono">{job.fairness_key}</span>
        </KV>
      )}
      <KV k="Tags" id="job-tags">
        {tags.length ? (
          <ul class="job-tags">
            {tags.map(([k, v]) => (
              <li key={k} class="badge">
                {k}={v}
              </li>
            ))}
          </ul>
        ) : (
          <span class="muted">—</span>
        )}
      </KV>
      {job.batch_id && (
        <KV k="Batch">
          <BatchLink id={job.batch_id} />
        </KV>
      )}
      {job.chain_id && (
        <KV k="Chain" id="job-chain">
          <ChainLinks job={job} chain={chain} />
        </KV>
      )}
      {job.depends_on && job.depends_on.length > 0 && (
        <KV k="Depends on">
          <DependsOn ids={job.depends_on} />
        </KV>
      )}
      <KV k="Updated">{utc(job.updated_at)}</KV>
    </dl>
  );
}

function Actions({ job, reload, onDeleted }: { job: Job; reload: () => void; onDeleted: () => void }) {
  const { can } = useSession();
  const [ask, setAsk] = useState<"" | "cancel" | "delete" | "move" | "approve" | "reject">("");
  const [notice, setNotice] = useState("");
  const { busy, error, run } = useAsync();
  if (!can("job.manage")) return null;
  const a = actionsFor(job.state, job.cancelling);
  const base = `/api/v1/jobs/${enc(job.id)}`;
  const budgetHeld = job.state === "held" && job.held_reason === "budget";
  return (
    <>
      {budgetHeld && (
        <>
          <button type="button" id="job-approve" class="primary" disabled={busy} onClick={() => setAsk("approve")}>
            Approve
          </button>
          <button type="button" id="job-reject" disabled={busy} onClick={() => setAsk("reject")}>
            Reject
          </button>
        </>
      )}
      {a.retry && (
        <button
          type="button"
          id="job-retry"
          class="primary"
          disabled={busy}
          onClick={async () => {
            setNotice("");
            if (await run(() => post(base + "/retry"))) {
              setNotice("Retried: the job is pending again.");
              reload();
            }
          }}
        >
          Retry
        </button>
      )}
      {a.cancel && (
        <button type="button" id="job-cancel" disabled={busy} onClick={() => setAsk("cancel")}>
          Cancel
        </button>
      )}
      {a.move && (
        <button type="button" id="job-move" disabled={busy} onClick={() => setAsk("move")}>
          Move
        </button>
      )}
      {a.del && (
        <button type="button" id="job-delete" class="danger" disabled={busy} onClick={() => setAsk("delete")}>
          Delete
        </button>
      )}
      {(error || notice) && (
        <div class="job-action-status">
          <ErrorBox error={error} />
          {notice && !error && (
            <span class="muted" role="status" id="job-action-notice">
              {notice}
            </span>
          )}
        </div>
      )}
      {/* Approve and reject share a Confirm, cancel and delete another. */}
      <Confirm
        id="job-decide-dialog"
        open={ask === "approve" || ask === "reject"}
        title={ask === "approve" ? "Approve job" : "Reject job"}
        confirmLabel={ask === "approve" ? "Approve job" : "Reject job"}
        danger={ask === "reject"}
        onClose={() => setAsk("")}
        onConfirm={async () => {
          const r = await post<{ status: string }>(base + "/" + ask);
          setNotice(`${ask === "approve" ? "Approved" : "Rejected"}: the job is ${r.status}.`);
          reload();
        }}
      >
        <p>
          {ask === "approve"
            ? `Run the job now, outside budget ${job.held_budget}? Its retries run whatever the budgets say, too.`
            : "Cancel the job? It will not run; a cancelled job can be retried by hand later."}
        </p>
      </Confirm>
      <Confirm
        open={ask === "cancel" || ask === "delete"}
        title={ask === "delete" ? "Delete job" : "Cancel job"}
        confirmLabel={ask === "delete" ? "Delete job" : "Cancel job"}
        danger
        onClose={() => setAsk("")}
        onConfirm={async () => {
          if (ask === "delete") {
            await del(base);
            onDeleted();
            return;
          }
          const r = await post<{ status: string }>(base + "/cancel");
          setNotice(r?.status === "cancelling" ? "Cancel requested: a worker on the stream is told at once, one over HTTP at its next heartbeat." : "Cancelled.");
          reload();
        }}
      >
        {ask === "delete" ? (
          <p>
            Delete job <span class="mono">{job.id}</span> and its history? This cannot be undone.
            {!["completed", "dead", "cancelled"].includes(job.state) && " An unfinished job counts as failed for its batch and for the jobs that depend on it."}
          </p>
        ) : (
          <p>
            {job.state === "active"
              ? "The job is running: its worker is told to stop at its next heartbeat, and the job ends cancelled."
              : "The job will not run. A cancelled job can be retried later."}
          </p>
        )}
      </Confirm>
      <MoveDialog
        open={ask === "move"}
        jobId={job.id}
        queue={job.queue}
        onClose={() => setAsk("")}
        onMoved={(q) => {
          setAsk("");
          setNotice("Moved to " + q + ".");
          reload();
        }}
      />
    </>
  );
}
