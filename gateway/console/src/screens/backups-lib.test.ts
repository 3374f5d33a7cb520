import { describe, expect, it } from "vitest";
import {
  anyRunning,
  backupPath,
  backupsPath,
  canRestore,
  formatBytes,
  kindLabel,
  policyBody,
  policyForm,
  policyPath,
  restoreBody,
  restoreText,
  shortChecksum,
  startedText,
  type Backup,
} from "./backups-lib";

function b(over: Partial<Backup> = {}): Backup {
  return { id: "bkp_1", namespace: "default", state: "completed", kind: "manual", created_at: "2026-11-24T10:00:00Z", size: 0, jobs: 0, records: 0, ...over };
}

describe("polling", () => {
  it("runs only while a backup or a restore runs", () => {
    expect(anyRunning(undefined)).toBe(false);
    expect(anyRunning([])).toBe(false);
    expect(anyRunning([b(), b({ state: "failed" })])).toBe(false);
    expect(anyRunning([b(), b({ state: "running" })])).toBe(true);
    const restore = { id: "rst_1", mode: "new" as const, target_namespace: "copy", state: "running", created_at: "2026-11-24T10:00:00Z" };
    expect(anyRunning([b({ last_restore: restore })])).toBe(true);
    expect(anyRunning([b({ last_restore: { ...restore, state: "completed" } })])).toBe(false);
  });
});

describe("formatting", () => {
  it("writes sizes, checksums and kinds", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(812)).toBe("812 B");
    expect(formatBytes(1434)).toBe("1.4 KB");
    expect(formatBytes(23 * 1024 * 1024 + 1)).toBe("23 MB");
    expect(formatBytes(-1)).toBe("—");
    expect(shortChecksum("0123456789abcdef0123")).toBe("0123456789ab");
    expect(shortChecksum(undefined)).toBe("—");
    expect(kindLabel("pre_restore")).toBe("before restore");
    expect(kindLabel("scheduled")).toBe("scheduled");
  });
  it("says what a restore did", () => {
    const r = { id: "rst_1", mode: "new" as const, target_namespace: "copy", state: "running", created_at: "" };
    expect(restoreText(undefined)).toBe("");
    expect(restoreText(r)).toBe("Restoring into copy…");
    expect(restoreText({ ...r, state: "completed", result: { records: 9, jobs: 1200, queues: 2, schedules: 0 } })).toBe("Restored into copy (1,200 jobs, 2 queues)");
    expect(restoreText({ ...r, mode: "replace", target_namespace: "default", state: "failed", error: "shard unavailable" })).toBe(
      "Restore over default failed: shard unavailable",
    );
  });
  it("follows the backup started here to its end", () => {
    expect(startedText("", [b()])).toBe("");
    expect(startedText("bkp_9", [b()])).toBe("Backup bkp_9 started.");
    expect(startedText("bkp_1", [b({ state: "running" })])).toBe("Backing up default: bkp_1 is running…");
    expect(startedText("bkp_1", [b({ jobs: 3, size: 694 })])).toBe("Backup bkp_1 completed: 3 jobs, 694 B.");
    expect(startedText("bkp_1", [b({ state: "failed" })])).toBe("Backup bkp_1 failed.");
  });
  it("escapes ids and names in paths", () => {
    expect(backupsPath("a b")).toBe("/api/v1/backups?namespace=a%20b");
    expect(backupPath("bkp_1", "restore")).toBe("/api/v1/backups/bkp_1/restore");
    expect(backupPath("bkp/1")).toBe("/api/v1/backups/bkp%2F1");
    expect(policyPath("prod")).toBe("/api/v1/namespaces/prod/backup-policy");
  });
});

describe("restore", () => {
  it("asks a name for a new namespace, and the namespace's name typed for a replace", () => {
    expect(restoreBody("new", " copy ")).toEqual({ target_namespace: "copy" });
    expect(restoreBody("replace", "ignored")).toEqual({ replace: true });
    expect(canRestore("new", "", "", "default")).toBe(false);
    expect(canRestore("new", "copy", "", "default")).toBe(true);
    expect(canRestore("replace", "", "defaul", "default")).toBe(false);
    expect(canRestore("replace", "", "Default", "default")).toBe(false);
    expect(canRestore("replace", "", "default", "default")).toBe(true);
  });
});

describe("policy", () => {
  it("starts from a daily default, round-trips a policy and sends fields as typed", () => {
    expect(policyForm(null)).toEqual({ cron: "@daily", timezone: "UTC", retention: "7", enabled: true });
    const p = { namespace: "n", cron: "0 3 * * *", timezone: "Europe/Paris", retention: 14, enabled: false };
    expect(policyBody(policyForm(p))).toEqual({ cron: "0 3 * * *", timezone: "Europe/Paris", retention: 14, enabled: false });
    // an empty time zone is left out (the server's UTC); a retention that is not a number goes as typed for the server to name
    expect(policyBody({ cron: " @hourly ", timezone: " ", retention: "many", enabled: true })).toEqual({ cron: "@hourly", retention: "many", enabled: true });
    expect(policyBody({ cron: "", timezone: "UTC", retention: "", enabled: true }).retention).toBeNull();
  });
});
