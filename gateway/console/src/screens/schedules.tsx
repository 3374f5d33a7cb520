// The Schedules screen: the namespace's cron schedules with their next and
// last runs in each schedule's own time zone, and (for roles that may)
// create, edit, enable/disable, run now (by hand) and delete. The list moves live: a job a
// schedule fires arrives as an "enqueued" event on its queue.
import { useMemo, useState } from "preact/hooks";
import { enc, post, del } from "../api";
import { settled, useApi, useLiveReload, useTick } from "../hooks";
import { setParam, useLocation } from "../router";
import { JobLink, QueueLink } from "../components/links";
import { useSession } from "../session";
import { Badge, ConfirmOn, Empty, ErrorBox, Notice, Pager, Screen } from "../components/ui";
import { statusGlyph } from "./queue-parts";
import { FilterBox } from "../components/forms";
import { RowButton, Table } from "../components/table";
import { plural } from "../lib/format";
import { RunAt, ScheduleDialog } from "./schedule-dialog";
import { paginate } from "./queue-lib";
import { matches, type Schedule, type ScheduleList } from "./schedule-logic";
import "./schedules.css";

/** Rows per page: the API answers every schedule at once, the page shows them in pages. */
const PAGE = 100;
/** How often relative times ("in 5m") are redrawn. */
const TICK_MS = 30_000;

export function Schedules() {
  const { can } = useSession();
  const manage = can("schedule.manage");
  const loc = useLocation();
  const filter = loc.query.get("q") ?? "";
  const list = useApi<ScheduleList>("/api/v1/schedules");
  const [page, setPage] = useState(1);
  const [dialog, setDialog] = useState<{ schedule: Schedule | null } | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<Error | null>(null);
  const [notice, setNotice] = useState("");
  useTick(TICK_MS);

  const all = list.data?.schedules ?? [];
  const queues = useMemo(() => [...new Set(all.map((s) => s.queue))].sort(), [list.data]);
  // A fired schedule enqueues a new job on its queue: its next and last run moved.
  const queueSet = useMemo(() => new Set(queues), [queues]);
  useLiveReload(list.reload, (e) => e.type === "enqueued" && !e.from && queueSet.has(e.queue));

  const shown = useMemo(() => all.filter((s) => matches(s, filter)), [list.data, filter]);
  const { items: rows, page: at, pages } = paginate(shown, page, PAGE);

  const toggle = async (s: Schedule) => {
    setBusy(s.id);
    setActionError(null);
    setNotice("");
    try {
      await post(`/api/v1/schedules/${enc(s.id)}/${s.enabled ? "disable" : "enable"}`);
      setNotice(`Schedule ${s.name} ${s.enabled ? "disabled" : "enabled"}.`);
      list.reload();
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setBusy(null);
    }
  };

  // A run by hand enqueues the schedule's job now; its own runs stay.
  const runNow = async (s: Schedule) => {
    setBusy(s.id);
    setActionError(null);
    setNotice("");
    try {
      const r = await post<{ job_id: string; unique_existing?: boolean }>(`/api/v1/schedules/${enc(s.id)}/run`);
      setNotice(
        r.unique_existing
          ? `Schedule ${s.name}: its unique key is held by job ${r.job_id}, which has not finished; nothing new was enqueued.`
          : `Schedule ${s.name} ran by hand: job ${r.job_id} enqueued.`,
      );
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setBusy(null);
    }
  };

  return (
    <Screen
      name="schedules"
      title="Schedules"
      ready={settled(list)}
      actions={
        manage && (
          <button type="button" id="schedule-new" class="primary" onClick={() => setDialog({ schedule: null })}>
            New schedule
          </button>
        )
      }
    >
      <div class="toolbar">
        <FilterBox
          id="schedule-filter"
          label="Filter schedules"
          class="schedule-filter"
          placeholder="Filter by name, queue, cron or time zone"
          value={filter}
          onInput={(q) => {
            setParam("q", q);
            setPage(1);
          }}
        />
        {list.data && (
          <span class="muted" aria-live="polite">
            {shown.length === all.length ? `${all.length} ${plural(all.length, "schedule")}` : `${shown.length} of ${all.length}`}
          </span>
        )}
      </div>
      <ErrorBox error={list.error} />
      <ErrorBox id="schedules-error" error={actionError} />
      <Notice id="schedules-notice">{notice}</Notice>
      {list.data && all.length === 0 && <Empty>No schedules in this namespace yet.</Empty>}
      {list.data && all.length > 0 && shown.length === 0 && <Empty>No schedule matches “{filter}”.</Empty>}
      {rows.length > 0 && (
        <Table
          id="schedules"
          class="schedules"
          cols={["Name", "Queue", "Cron", "Time zone", "Status", "Next run", "Last run", "Last job", manage && { label: "Actions", hidden: true }]}
        >
          {rows.map((s) => (
            <tr key={s.id} data-schedule={s.name} data-id={s.id}>
              <td class="schedule-name">{s.name}</td>
              <td class="schedule-queue">
                <QueueLink queue={s.queue} />
              </td>
              <td>
                <code>{s.cron}</code>
              </td>
              <td class="schedule-zone">{s.timezone}</td>
              <td>
                <Badge class={s.enabled ? "schedule-on" : "schedule-off"} glyph={s.enabled ? "●" : statusGlyph.paused}>
                  {s.enabled ? "enabled" : "disabled"}
                </Badge>
              </td>
              <td class="schedule-next">
                <RunAt at={s.next_run} tz={s.timezone} />
              </td>
              <td class="schedule-last">
                <RunAt at={s.last_run} tz={s.timezone} />
              </td>
              <td class="schedule-job">
                {s.last_job_id ? (
                  <JobLink job={s.last_job_id} class="mono" title={s.last_job_id} />
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              {manage && (
                <td class="schedule-actions">
                  <div class="row-actions">
                    <RowButton class="schedule-edit" name={`Edit schedule ${s.name}`} onClick={() => setDialog({ schedule: s })}>
                      Edit
                    </RowButton>
                    <RowButton class="schedule-toggle" name={`${s.enabled ? "Disable" : "Enable"} schedule ${s.name}`} disabled={busy === s.id} onClick={() => toggle(s)}>
                      {s.enabled ? "Disable" : "Enable"}
                    </RowButton>
                    <RowButton class="schedule-run" name={`Run schedule ${s.name} now`} disabled={busy === s.id} onClick={() => runNow(s)}>
                      Run now
                    </RowButton>
                    <RowButton class="schedule-delete" danger name={`Delete schedule ${s.name}`} onClick={() => setDeleting(s)}>
                      Delete
                    </RowButton>
                  </div>
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      {pages > 1 && <Pager page={at} hasNext={at < pages} onPage={setPage} label="Schedule pages" />}

      {manage && (
        <ScheduleDialog
          open={dialog !== null}
          schedule={dialog?.schedule ?? null}
          queues={queues}
          onClose={() => setDialog(null)}
          onSaved={(s) => {
            setNotice(`Schedule ${s.name} ${dialog?.schedule ? "saved" : "created"}.`);
            setActionError(null);
            setDialog(null);
            list.reload();
          }}
        />
      )}
      {manage && (
        <ConfirmOn
          item={deleting}
          title="Delete schedule"
          confirmLabel="Delete"
          danger
          onClose={() => setDeleting(null)}
          onConfirm={async (s) => {
            await del(`/api/v1/schedules/${enc(s.id)}`);
            setNotice(`Schedule ${s.name} deleted.`);
            list.reload();
          }}
        >
          <p>
            Delete schedule <strong>{deleting?.name}</strong>? It fires no more; jobs it already enqueued stay.
          </p>
        </ConfirmOn>
      )}
    </Screen>
  );
}
