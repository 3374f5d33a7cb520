// A bulk operation's outcome: the counts of one that ran while we waited,
// or the live progress of one the shard runs in the background (its own
// SSE stream, GET /api/v1/bulk/{id}/progress: "progress" events while it
// changes, then "done"), with a Cancel until it is done.
import { useEffect, useRef, useState } from "preact/hooks";
import { del, enc, get } from "../api";
import { openStream } from "../sse";
import { ErrorBox, Meter } from "./ui";
import { counted, exact } from "../lib/format";

/** BulkResult is the answer to a bulk that ran while the caller waited (wire.BulkResult). */
export interface BulkResult {
  affected: number;
  skipped: number;
  errors: number;
  failures: { job_id: string; error: string }[] | null;
  duration_ms: number;
}

/** BulkAccepted is the 202 answer to a bulk that runs in the background (wire.BulkAccepted). */
export interface BulkAccepted {
  bulk_operation_id: string;
  status: string;
  estimated_total: number;
  progress_url: string;
}

/** BulkOperation is a background operation's record (wire.BulkOperation). */
export interface BulkOperation {
  id: string;
  action: string;
  status: "processing" | "completed" | "cancelled";
  total: number;
  processed: number;
  affected: number;
  skipped: number;
  errors: number;
  created_at: string | null;
  finished_at: string | null;
  progress_url: string;
}

export type BulkRunState = { title: string; result: BulkResult } | { title: string; accepted: BulkAccepted };


function seconds(ms: number): string {
  if (ms < 1000) return Math.round(ms) + " ms";
  const s = ms / 1000;
  return s < 60 ? s.toFixed(1) + " s" : Math.floor(s / 60) + "m " + Math.round(s % 60) + "s";
}

/** percent is how far an operation got, 0..100 (its total is an estimate, so processed may pass it). */
export function percent(op: Pick<BulkOperation, "status" | "processed" | "total">): number {
  if (op.status === "completed") return 100;
  if (op.total <= 0) return 0;
  return Math.min(100, Math.floor((op.processed / op.total) * 100));
}

export function BulkRun(props: { run: BulkRunState; canCancel: boolean; onFinished: () => void; onDismiss: () => void }) {
  const { run } = props;
  return (
    <section class="card bulk-run" id="bulk-run" aria-labelledby="bulk-run-title">
      <div class="bulk-run-head">
        <h2 id="bulk-run-title">Bulk operation: {run.title}</h2>
      </div>
      {"result" in run ? (
        <SyncResult result={run.result} onFinished={props.onFinished} />
      ) : (
        <Progress accepted={run.accepted} canCancel={props.canCancel} onFinished={props.onFinished} />
      )}
      <div class="bulk-run-foot">
        <button type="button" id="bulk-dismiss" onClick={props.onDismiss}>
          Dismiss
        </button>
      </div>
    </section>
  );
}

function SyncResult({ result, onFinished }: { result: BulkResult; onFinished: () => void }) {
  useEffect(() => {
    onFinished();
  }, []);
  const failures = result.failures ?? [];
  return (
    <>
      <p id="bulk-done" role="status" class="notice">
        Done in {seconds(result.duration_ms)}: <strong>{exact(result.affected)}</strong> affected, {exact(result.skipped)} skipped (in another
        state or already as asked), {counted(result.errors, "error")}.
      </p>
      {failures.length > 0 && <Failures failures={failures} more={result.errors - failures.length} />}
    </>
  );
}

function Failures({ failures, more }: { failures: { job_id: string; error: string }[]; more: number }) {
  return (
    <details class="bulk-failures">
      <summary>Failures ({failures.length + Math.max(0, more)})</summary>
      <ul>
        {failures.map((f) => (
          <li key={f.job_id}>
            <code>{f.job_id}</code>: {f.error}
          </li>
        ))}
      </ul>
      {more > 0 && <p class="muted">… and {exact(more)} more</p>}
    </details>
  );
}

function Progress(props: { accepted: BulkAccepted; canCancel: boolean; onFinished: () => void }) {
  const { accepted } = props;
  const id = accepted.bulk_operation_id;
  const [op, setOp] = useState<BulkOperation>({
    id,
    action: "",
    status: "processing",
    total: accepted.estimated_total,
    processed: 0,
    affected: 0,
    skipped: 0,
    errors: 0,
    created_at: null,
    finished_at: null,
    progress_url: accepted.progress_url,
  });
  const [error, setError] = useState<Error | string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const started = useRef(Date.now());
  const finishedAt = useRef<number | null>(null);
  const done = op.status !== "processing";

  useEffect(() => {
    if (done) {
      finishedAt.current ??= Date.now();
      props.onFinished();
    }
  }, [done]);

  useEffect(() => {
    if (done) return;
    let over = false;
    const stream = openStream(accepted.progress_url || `/api/v1/bulk/${enc(id)}/progress`, {
      once: true,
      onMessage: (m) => {
        if (m.event === "error") {
          setError(safeText(m.data));
          return;
        }
        if (m.event !== "progress" && m.event !== "done") return;
        try {
          const next = JSON.parse(m.data) as BulkOperation;
          if (next && typeof next.processed === "number") setOp(next);
          if (m.event === "done") over = true;
        } catch {
          // a malformed event: the next one, or the status read below, tells
        }
      },
      onState: (s, err) => {
        if (s !== "stopped" || over) return;
        over = true;
        // The stream ended without "done" (refused, or the node stopped):
        // read the record once and follow it again if it still runs.
        get<BulkOperation>(`/api/v1/bulk/${enc(id)}`).then(
          (cur) => {
            setOp(cur);
            if (cur.status === "processing") setAttempt((a) => a + 1);
          },
          (e: Error) => setError(err ?? e),
        );
      },
    });
    return () => {
      over = true;
      stream.close();
    };
  }, [id, attempt, done]);

  const pct = percent(op);
  const elapsed = ((finishedAt.current ?? Date.now()) - started.current) / 1000;
  const rate = elapsed > 0 ? op.processed / elapsed : 0;
  const remaining = rate > 0 && op.total > op.processed ? (op.total - op.processed) / rate : 0;
  const outOf = `${exact(op.processed)} / ${exact(Math.max(op.total, op.processed))}`;
  return (
    <>
      <div class="bulk-progress-row">
        <Meter
          pct={pct}
          id="bulk-progress"
          class="bulk-meter"
          aria-label="Progress of the bulk operation"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={pct}
          aria-valuetext={`${outOf} jobs (${pct} %)`}
          data-processed={op.processed}
          data-total={op.total}
          data-status={op.status}
        />
        <span class="bulk-figures">
          {outOf} <span class="muted">({pct} %)</span>
        </span>
      </div>
      <p class="bulk-stats muted">
        Elapsed {seconds(elapsed * 1000)}
        {!done && remaining > 0 && <> · Remaining ~{seconds(remaining * 1000)}</>}
        {rate > 0 && <> · Rate {exact(Math.round(rate))}/s</>}
        {" · "}Affected {exact(op.affected)} · Skipped {exact(op.skipped)} · Errors {exact(op.errors)}
      </p>
      <ErrorBox error={error} />
      {done ? (
        <p id="bulk-done" role="status" class={op.status === "completed" ? "notice" : "error"}>
          {op.status === "completed" ? "Completed" : "Cancelled"} after {counted(op.processed, "job")}: <strong>{exact(op.affected)}</strong> affected,{" "}
          {exact(op.skipped)} skipped, {counted(op.errors, "error")}.
        </p>
      ) : (
        props.canCancel && (
          <button
            type="button"
            id="bulk-op-cancel"
            class="danger"
            disabled={cancelling}
            onClick={async () => {
              setCancelling(true);
              try {
                setOp(await del<BulkOperation>(`/api/v1/bulk/${enc(id)}`));
              } catch (e) {
                setError(e as Error);
              } finally {
                setCancelling(false);
              }
            }}
          >
            {cancelling ? "Cancelling…" : "Cancel operation"}
          </button>
        )
      )}
    </>
  );
}

// An SSE "error" event's data is a JSON string.
function safeText(data: string): string {
  try {
    const v = JSON.parse(data);
    return typeof v === "string" ? v : data;
  } catch {
    return data;
  }
}
