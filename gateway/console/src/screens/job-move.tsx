// The move dialog: POST /api/v1/jobs/{id}/move takes only the target
// queue (wire.MoveRequest), so that is all it asks; what a move keeps is
// said instead of offered as options the API does not have.
import { useEffect, useState } from "preact/hooks";
import { enc, post } from "../api";
import { Dialog, ErrorBox, KV, useAsync } from "../components/ui";
import { FormFooter } from "../components/forms";
import { QueuePicker } from "./job-queuepicker";

export function MoveDialog(props: { open: boolean; jobId: string; queue: string; onClose: () => void; onMoved: (queue: string) => void }) {
  const [target, setTarget] = useState("");
  const { busy, error, setError, run } = useAsync();
  useEffect(() => {
    if (props.open) {
      setTarget("");
      setError(null);
    }
  }, [props.open]);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!target) {
      setError(new Error("Choose the queue to move the job to."));
      return;
    }
    const ok = await run(() => post(`/api/v1/jobs/${enc(props.jobId)}/move`, { queue: target }));
    if (ok) props.onMoved(target);
  };
  return (
    <Dialog open={props.open} title="Move job to queue" onClose={props.onClose} id="move-dialog">
      <form id="move-form" onSubmit={submit}>
        <dl class="kv">
          <KV k="Current queue" class="mono">
            {props.queue}
          </KV>
        </dl>
        <QueuePicker id="move-queue" label="Target queue" value={target} onChange={setTarget} exclude={props.queue} />
        <p class="muted job-move-note">
          The job keeps its state, attempt count, priority, payload and history; only its queue changes. A
          finished job can then be retried to run again from its first attempt.
        </p>
        <ErrorBox error={error} />
        <FormFooter id="move-submit" busy={busy} disabled={!target} onCancel={props.onClose} label={busy ? "Moving…" : "Move"} />
      </form>
    </Dialog>
  );
}
