// The data side of the backups screen: the API's shapes (wire/backups.go)
// and the pure logic over them (what is still running, formatting, the
// request bodies), kept apart so it is unit tested without a browser.
import { enc } from "../api";
import { typed } from "./queue-lib";

export interface RestoreResult {
  records: number;
  jobs: number;
  queues: number;
  schedules: number;
}

export interface BackupRestore {
  id: string;
  mode: "new" | "replace";
  target_namespace: string;
  state: string;
  created_at: string;
  completed_at?: string;
  pre_restore_backup?: string;
  result?: RestoreResult;
  error?: string;
}

export interface Backup {
  id: string;
  namespace: string;
  /** running, completed or failed */
  state: string;
  /** manual, scheduled or pre_restore */
  kind: string;
  created_at: string;
  completed_at?: string;
  size: number;
  jobs: number;
  records: number;
  checksum?: string;
  raft_index?: number;
  shard?: string;
  error?: string;
  last_restore?: BackupRestore;
}

export interface BackupList {
  backups: Backup[];
}

export interface BackupPolicy {
  namespace: string;
  cron: string;
  timezone: string;
  retention: number;
  enabled: boolean;
  last_run_at?: string;
  next_run_at?: string;
}

export const RUNNING = "running";

/** How often the list is read again while a backup or restore runs: no event announces their progress. */
export const POLL_MS = 1500;

export const backupsPath = (ns: string) => "/api/v1/backups?namespace=" + enc(ns);
export const backupPath = (id: string, action = "") => "/api/v1/backups/" + enc(id) + (action ? "/" + action : "");
export const policyPath = (ns: string) => "/api/v1/namespaces/" + enc(ns) + "/backup-policy";

/** anyRunning is true while a backup of the list, or a restore from one, is still running: then the list is polled. */
export function anyRunning(list: Backup[] | undefined): boolean {
  return !!list?.some((b) => b.state === RUNNING || b.last_restore?.state === RUNNING);
}

/** shortChecksum is a checksum's first 12 hex digits (the whole one goes in the title). */
export function shortChecksum(sum: string | undefined): string {
  return sum ? sum.slice(0, 12) : "—";
}

/** formatBytes writes a size as "812 B", "1.4 KB", "23 MB" (powers of 1,024). */
export function formatBytes(n: number | undefined): string {
  if (n === undefined || n === null || !Number.isFinite(n) || n < 0) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const s = u === 0 ? String(v) : v >= 10 ? String(Math.round(v)) : (Math.round(v * 10) / 10).toString();
  return s + " " + units[u];
}

/** kindLabel is how a backup's kind reads in the list. */
export function kindLabel(kind: string): string {
  return kind === "pre_restore" ? "before restore" : kind;
}

/** stateGlyph marks a backup or restore state, so it does not rely on colour alone. */
export function stateGlyph(state: string): string {
  return state === "completed" ? "✓" : state === "failed" ? "✕" : state === RUNNING ? "●" : "•";
}

export type RestoreMode = "new" | "replace";

/**
 * restoreBody is POST .../restore's body: into a new namespace by name
 * (trimmed; the server judges the name), or over the backup's own
 * namespace.
 */
export function restoreBody(mode: RestoreMode, target: string): { target_namespace: string } | { replace: true } {
  return mode === "replace" ? { replace: true } : { target_namespace: target.trim() };
}

/** canRestore says whether the restore form may be sent: a replace only once the namespace's name is typed exactly, a new one once a name is given. */
export function canRestore(mode: RestoreMode, target: string, confirm: string, namespace: string): boolean {
  return mode === "replace" ? confirm === namespace : target.trim() !== "";
}

/** restoreText says what a backup's latest restore did or is doing. */
export function restoreText(r: BackupRestore | undefined): string {
  if (!r) return "";
  const where = r.mode === "replace" ? `over ${r.target_namespace}` : `into ${r.target_namespace}`;
  if (r.state === RUNNING) return `Restoring ${where}…`;
  if (r.state === "failed") return `Restore ${where} failed${r.error ? ": " + r.error : ""}`;
  const n = r.result ? ` (${r.result.jobs.toLocaleString("en-US")} jobs, ${r.result.queues.toLocaleString("en-US")} queues)` : "";
  return `Restored ${where}${n}`;
}

export interface PolicyForm {
  cron: string;
  timezone: string;
  retention: string;
  enabled: boolean;
}

/** policyForm is the form's text for a policy (none: a daily default to start from). */
export function policyForm(p: BackupPolicy | null | undefined): PolicyForm {
  if (!p) return { cron: "@daily", timezone: "UTC", retention: "7", enabled: true };
  return { cron: p.cron, timezone: p.timezone, retention: String(p.retention), enabled: p.enabled };
}

/** policyBody is PUT .../backup-policy's body: fields as typed (an empty time zone is the server's UTC), so the server's 400 names what is wrong. */
export function policyBody(f: PolicyForm): { cron: string; timezone?: string; retention: number | string | null; enabled: boolean } {
  const tz = f.timezone.trim();
  return { cron: f.cron.trim(), ...(tz ? { timezone: tz } : {}), retention: typed(f.retention), enabled: f.enabled };
}

/** startedText says how the backup started here is doing, while it is listed. */
export function startedText(id: string, backups: Backup[]): string {
  const b = id ? backups.find((x) => x.id === id) : undefined;
  if (!b) return id ? `Backup ${id} started.` : "";
  if (b.state === RUNNING) return `Backing up ${b.namespace}: ${b.id} is running…`;
  if (b.state === "completed") return `Backup ${b.id} completed: ${b.jobs.toLocaleString("en-US")} jobs, ${formatBytes(b.size)}.`;
  return `Backup ${b.id} failed.`;
}
