// Bulk actions on the search's jobs: on the selected rows (by id), or on
// every job the filter matches (the request carries the filter, so it is
// not limited to the page). Move and Change priority first ask for their
// target; every action is confirmed with its count and the filter in words.
import { useRef, useState } from "preact/hooks";
import { get, post } from "../api";
import { bulkBody, describeFilter, PRIORITIES, type BulkAction, type SearchFilter } from "../filters";
import { useSession } from "../session";
import { BulkRun, type BulkAccepted, type BulkResult, type BulkRunState } from "./bulk-run";
import { preview, type SearchJob } from "./search-results";
import { Confirm, Dialog, ErrorBox, Field } from "./ui";
import { FormFooter, Options } from "./forms";
import { Table } from "./table";
import { counted, exact } from "../lib/format";

interface ActionInfo {
  id: string;
  button: string;
  title: string;
  verb: string;
  applies: string;
  danger?: boolean;
}

const ACTIONS: Record<BulkAction, ActionInfo> = {
  retry: { id: "bulk-retry", button: "Retry", title: "Retry", verb: "retry", applies: "dead, cancelled and completed jobs (attempts start again)" },
  delete: { id: "bulk-delete", button: "Delete", title: "Delete", verb: "delete", applies: "jobs in every state but active", danger: true },
  cancel: {
    id: "bulk-cancel",
    button: "Cancel",
    title: "Cancel",
    verb: "cancel",
    applies: "pending, active, scheduled, retrying and held jobs",
    danger: true,
  },
  move: { id: "bulk-move", button: "Move to queue…", title: "Move", verb: "move", applies: "pending, dead, scheduled and completed jobs" },
  change_priority: {
    id: "bulk-priority",
    button: "Change priority…",
    title: "Change priority",
    verb: "change the priority of",
    applies: "pending and scheduled jobs",
  },
};
const ORDER: BulkAction[] = ["retry", "delete", "move", "change_priority", "cancel"];

/** What a bulk action applies to: the selected ids, or every match of the filter. */
export type BulkSelection = { ids: string[] } | { filter: SearchFilter; total: number; exact: boolean };

interface Pending {
  action: BulkAction;
  stage: "target" | "confirm";
  queue: string;
  priority: string;
}

/** countWords is "50 dead jobs in emails.send matching …" or "3 selected jobs". */
export function countWords(sel: BulkSelection): string {
  if ("ids" in sel) return counted(sel.ids.length, "selected job");
  let d = describeFilter(sel.filter);
  if (sel.exact && sel.total === 1) d = d.replace(/\bjobs\b/, "job");
  return `${sel.exact ? "" : "at least "}${exact(sel.total)} ${d}`;
}

/** sentence is the confirmation's "This will retry 50 dead jobs in … ." */
export function sentence(action: BulkAction, sel: BulkSelection, target: { queue?: string; priority?: string }): string {
  const what = countWords(sel);
  if (action === "move") return `This will move ${what} to ${target.queue}.`;
  if (action === "change_priority") return `This will change the priority of ${what} to ${target.priority}.`;
  return `This will ${ACTIONS[action].verb} ${what}.`;
}

export function BulkBar(props: {
  selection: BulkSelection | null;
  /** jobs to preview in the confirmation (the selected rows, or the page) */
  preview: SearchJob[];
  onClear: () => void;
  /** the operation ended: reload the results */
  onFinished: () => void;
}) {
  const { can } = useSession();
  const [pending, setPending] = useState<Pending | null>(null);
  const [run, setRun] = useState<(BulkRunState & { n: number }) | null>(null);
  const runs = useRef(0); // a new run replaces the view of the last
  const [queues, setQueues] = useState<string[] | null>(null);
  const [targetErr, setTargetErr] = useState<string | null>(null);
  const sel = props.selection;
  const count = !sel ? 0 : "ids" in sel ? sel.ids.length : sel.total;

  const start = (action: BulkAction) => {
    setTargetErr(null);
    const needsTarget = action === "move" || action === "change_priority";
    setPending({ action, stage: needsTarget ? "target" : "confirm", queue: "", priority: "high" });
    // Queue names for the move dialog's suggestions; typing any name works without them.
    if (action === "move" && queues === null && can("queue.read"))
      get<{ queues: { name: string }[] }>("/api/v1/queues").then(
        (b) => setQueues(b.queues.map((q) => q.name).slice(0, 1000)),
        () => setQueues([]),
      );
  };
  const close = () => setPending(null);

  const confirmRun = async () => {
    if (!pending || !sel) return;
    const { action } = pending;
    const target = "ids" in sel ? { ids: sel.ids } : { filter: sel.filter };
    const body = bulkBody(action, target, { queue: pending.queue, priority: pending.priority });
    const answer = await post<BulkResult | BulkAccepted>("/api/v1/jobs/bulk", body);
    const title = action === "move" ? `Move to ${pending.queue}` : action === "change_priority" ? `Change priority to ${pending.priority}` : ACTIONS[action].title;
    const n = ++runs.current;
    setRun("bulk_operation_id" in answer ? { n, title, accepted: answer } : { n, title, result: answer });
    props.onClear();
  };

  const info = pending ? ACTIONS[pending.action] : null;
  const shown = props.preview.slice(0, 5);
  const more = Math.max(0, count - shown.length);
  return (
    <div class="bulk">
      <div class="toolbar bulk-bar" role="group" aria-label="Bulk actions">
        <span class="bulk-label">
          {count > 0 && sel ? (
            <>
              Bulk actions for <strong id="bulk-count">{"ids" in sel ? `${count} selected` : `all ${sel.exact ? "" : "≥ "}${exact(count)} matching`}</strong>:
            </>
          ) : (
            <span class="muted">Select jobs, or all matching, for bulk actions:</span>
          )}
        </span>
        {ORDER.map((a) => (
          <button key={a} type="button" id={ACTIONS[a].id} class={ACTIONS[a].danger ? "bulk-danger" : undefined} disabled={count === 0} onClick={() => start(a)}>
            {ACTIONS[a].button}
          </button>
        ))}
        {count > 0 && (
          <button type="button" class="link" id="bulk-clear" onClick={props.onClear}>
            Clear selection
          </button>
        )}
      </div>

      {run && (
        <BulkRun key={run.n} run={run} canCancel={can("job.manage")} onFinished={props.onFinished} onDismiss={() => setRun(null)} />
      )}

      <Dialog open={pending?.stage === "target" && pending.action === "move"} title="Move jobs to queue" onClose={close} id="bulk-move-dialog">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const q = pending?.queue.trim() ?? "";
            if (!q) return setTargetErr("Name the queue to move the jobs to.");
            setPending({ ...pending!, queue: q, stage: "confirm" });
          }}
        >
          <Field label="Target queue" for="bulk-move-queue" hint="A queue that does not exist yet is created by the move.">
            <input
              id="bulk-move-queue"
              type="text"
              list="bulk-move-queues"
              autoComplete="off"
              spellcheck={false}
              required
              value={pending?.queue ?? ""}
              onInput={(e) => setPending({ ...pending!, queue: e.currentTarget.value })}
            />
            <datalist id="bulk-move-queues">{queues?.map((q) => <option key={q} value={q} />)}</datalist>
          </Field>
          <ErrorBox error={targetErr} />
          <FormFooter id="bulk-move-next" onCancel={close} label="Next" />
        </form>
      </Dialog>

      <Dialog open={pending?.stage === "target" && pending.action === "change_priority"} title="Change the jobs' priority" onClose={close} id="bulk-priority-dialog">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setPending({ ...pending!, stage: "confirm" });
          }}
        >
          <Field label="New priority" for="bulk-priority-value">
            <select id="bulk-priority-value" value={pending?.priority ?? "high"} onChange={(e) => setPending({ ...pending!, priority: e.currentTarget.value })}>
              <Options choices={PRIORITIES} />
            </select>
          </Field>
          <FormFooter id="bulk-priority-next" onCancel={close} label="Next" />
        </form>
      </Dialog>

      <Confirm
        open={pending?.stage === "confirm"}
        title={info ? `Bulk operation: ${info.title}` : "Bulk operation"}
        confirmLabel={
          info && sel
            ? "ids" in sel || sel.exact
              ? `${info.title} ${counted(count, "job")}`
              : `${info.title} all matching`
            : "Confirm"
        }
        danger={info?.danger}
        onConfirm={confirmRun}
        onClose={close}
      >
        {pending && sel && info && (
          <div class="bulk-confirm">
            <p id="bulk-confirm-text">{sentence(pending.action, sel, pending)}</p>
            <p class="muted">
              {info.title} applies to {info.applies}; others are skipped.
            </p>
            <p class="bulk-warning">
              <span aria-hidden="true">⚠ </span>This action cannot be undone.
            </p>
            {shown.length > 0 && (
              <>
                <p class="label">Preview (first {shown.length}):</p>
                <Table class="bulk-preview" cols={["Job", "Payload"]}>
                  {shown.map((j) => (
                    <tr key={j.id}>
                      <td class="mono">{j.id}</td>
                      <td class="mono trunc">{preview(j.payload, 40)}</td>
                    </tr>
                  ))}
                </Table>
                {more > 0 && (
                  <p class="muted">
                    … and {sel && !("ids" in sel) && !sel.exact ? "at least " : ""}
                    {exact(more)} more
                  </p>
                )}
              </>
            )}
          </div>
        )}
      </Confirm>
    </div>
  );
}
