// Backups: the current namespace's backups (newest first), taking one now,
// downloading, deleting and restoring one (backup.manage), and the
// namespace's backup policy. Hidden from a role what it may not do; the
// gateway refuses it anyway.
import { useState } from "preact/hooks";
import { del, post } from "../api";
import { settled, useApi, useInterval } from "../hooks";
import { useSession } from "../session";
import { Badge, ConfirmOn, Empty, ErrorBox, Notice, Screen, Time, useAsync } from "../components/ui";
import { NumCell, RowButton, Table } from "../components/table";
import { BackupPolicyCard } from "./backup-policy";
import { RestoreDialog } from "./backup-restore";
import {
  anyRunning,
  backupPath,
  backupsPath,
  formatBytes,
  kindLabel,
  POLL_MS,
  restoreText,
  RUNNING,
  shortChecksum,
  startedText,
  stateGlyph,
  type Backup,
  type BackupList,
} from "./backups-lib";
import "./backups.css";

export function Backups() {
  const { can, namespace, setNamespace } = useSession();
  const manage = can("backup.manage");
  const list = useApi<BackupList>(backupsPath(namespace));
  const backups = list.data?.backups ?? [];
  // No event announces a backup's or a restore's progress: the list is read
  // again every POLL_MS only while one of them runs, and not at all after.
  useInterval(list.reload, POLL_MS, anyRunning(backups));
  const act = useAsync();
  const [notice, setNotice] = useState("");
  // The backup "Back up now" started, or the backup a restore was started from: the notice follows it to its end.
  const [started, setStarted] = useState("");
  const [restored, setRestored] = useState("");
  const follow = (backup: string, restore: string, msg: string) => {
    setStarted(backup);
    setRestored(restore);
    setNotice(msg);
  };
  const followedRestore = restored ? backups.find((b) => b.id === restored)?.last_restore : undefined;
  const [restoring, setRestoring] = useState<Backup | null>(null);
  const [deleting, setDeleting] = useState<Backup | null>(null);

  const backUpNow = () =>
    act.run(async () => {
      const b = await post<Backup>("/api/v1/backups", { namespace });
      follow(b.id, "", "");
      list.reload();
    });

  return (
    <Screen
      name="backups"
      title="Backups"
      ready={settled(list)}
      actions={
        manage && (
          <button type="button" id="backup-now" class="primary" disabled={act.busy} onClick={backUpNow}>
            {act.busy ? "Starting…" : "Back up now"}
          </button>
        )
      }
    >
      <p class="muted">
        Backups of namespace <strong class="mono">{namespace}</strong>: its queues, jobs and schedules as they were when each was taken.
      </p>
      <ErrorBox error={act.error} />
      <ErrorBox error={list.error} />
      <Notice id="backups-notice">{notice || (followedRestore ? restoreText(followedRestore) : startedText(started, backups))}</Notice>
      {list.data && backups.length === 0 && <Empty>No backups of this namespace yet.</Empty>}
      {backups.length > 0 && (
        <Table
          id="backups-table"
          caption="Backups"
          cols={["Backup", "Kind", "State", "Created", { label: "Size", num: true }, { label: "Jobs", num: true }, "Checksum", { label: "Actions", hidden: true }]}
        >
          {backups.map((b) => (
            <BackupRow
              key={b.id}
              b={b}
              manage={manage}
              onRestore={() => setRestoring(b)}
              onDelete={() => setDeleting(b)}
              onSwitch={(ns) => setNamespace(ns)}
              current={namespace}
            />
          ))}
        </Table>
      )}
      <BackupPolicyCard namespace={namespace} manage={manage} />
      <RestoreDialog
        backup={restoring}
        onClose={() => setRestoring(null)}
        onStarted={(b) => {
          setRestoring(null);
          follow("", b.id, restoreText(b.last_restore) ? "" : `Restore from ${b.id} started.`);
          list.reload();
        }}
      />
      <ConfirmOn
        id="backup-delete"
        item={deleting}
        title={`Delete backup ${deleting?.id ?? ""}`}
        confirmLabel="Delete backup"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async (b) => {
          await del(backupPath(b.id));
          follow("", "", `Backup ${b.id} deleted.`);
          list.reload();
        }}
      >
        <p>The stored backup is deleted; it cannot be restored afterwards. The namespace itself is not touched.</p>
      </ConfirmOn>
    </Screen>
  );
}

function BackupRow(props: {
  b: Backup;
  manage: boolean;
  current: string;
  onRestore: () => void;
  onDelete: () => void;
  onSwitch: (ns: string) => void;
}) {
  const { b, manage } = props;
  const r = b.last_restore;
  const done = b.state === "completed";
  return (
    <>
      <tr data-backup={b.id} data-state={b.state}>
        <td class="mono">{b.id}</td>
        <td data-col="kind">{kindLabel(b.kind)}</td>
        <td data-col="state">
          <Badge class={"backup-" + b.state} glyph={stateGlyph(b.state)} title={b.error}>
            {b.state}
          </Badge>
        </td>
        <td>
          <Time at={b.created_at} />
        </td>
        <NumCell col="size">{done ? formatBytes(b.size) : "—"}</NumCell>
        <NumCell col="jobs">{done ? b.jobs.toLocaleString("en-US") : "—"}</NumCell>
        <td class="mono" data-col="checksum" title={b.checksum ? "sha256 " + b.checksum : undefined}>
          {shortChecksum(b.checksum)}
        </td>
        <td class="row-actions">
          {manage && done && (
            <>
              <a class="button" href={backupPath(b.id, "download")} download={b.id + ".jbk"} data-download={b.id} aria-label={`Download backup ${b.id}`}>
                Download
              </a>
              <RowButton name={`Restore backup ${b.id}`} data={{ "data-restore": b.id }} disabled={r?.state === RUNNING} onClick={props.onRestore}>
                Restore
              </RowButton>
            </>
          )}
          {manage && b.state !== RUNNING && (
            <RowButton name={`Delete backup ${b.id}`} data={{ "data-delete": b.id }} danger onClick={props.onDelete}>
              Delete
            </RowButton>
          )}
        </td>
      </tr>
      {(b.error || r) && (
        <tr class="backup-detail" data-backup-detail={b.id}>
          <td colSpan={8}>
            {b.error && <span class="backup-error">Failed: {b.error}</span>}
            {r && (
              <span class="backup-restore" data-restore-state={r.state}>
                {restoreText(r)}
                {r.pre_restore_backup && <span class="muted"> · what it replaced is kept as {r.pre_restore_backup}</span>}
                {r.state === "completed" && r.mode === "new" && r.target_namespace !== props.current && (
                  <>
                    {" "}
                    <button type="button" class="link" data-switch-ns={r.target_namespace} onClick={() => props.onSwitch(r.target_namespace)}>
                      Switch to {r.target_namespace}
                    </button>
                  </>
                )}
              </span>
            )}
          </td>
        </tr>
      )}
    </>
  );
}
