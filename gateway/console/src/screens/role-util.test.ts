import { describe, expect, it } from "vitest";
import { ACTION_CHOICES, builtinActions, mayGrantRole, permissionsOf, roleNameError, rowsOf, splitPatterns } from "./role-util";

describe("builtinActions", () => {
  it("reads the copy of tenancy.BuiltinPolicies", () => {
    expect(builtinActions("owner")).toEqual(["*"]);
    expect(builtinActions("viewer")).toEqual(["job.read", "queue.read", "schedule.read", "namespace.read", "backup.read", "webhook.read"]);
    expect(builtinActions("developer")).toEqual(["job.*", "queue.*", "schedule.*", "namespace.read", "backup.read", "webhook.*"]);
    expect(builtinActions("nobody")).toEqual([]);
  });
});

describe("mayGrantRole", () => {
  it("follows the rank rule between built-in roles", () => {
    expect(mayGrantRole("owner", "owner")).toBe(true);
    expect(mayGrantRole("admin", "owner")).toBe(false);
    expect(mayGrantRole("admin", "admin")).toBe(true);
    expect(mayGrantRole("admin", "viewer")).toBe(true);
    expect(mayGrantRole("developer", "viewer")).toBe(false);
    expect(mayGrantRole("viewer", "viewer")).toBe(false);
  });
  it("keeps owner and admin from custom-role keys and leaves custom grants to the server", () => {
    expect(mayGrantRole("support", "admin")).toBe(false);
    expect(mayGrantRole("support", "owner")).toBe(false);
    expect(mayGrantRole("support", "viewer")).toBe(true);
    expect(mayGrantRole("owner", "support")).toBe(true);
  });
});

describe("splitPatterns", () => {
  it("splits on commas and blanks, without empties or repeats", () => {
    expect(splitPatterns(" emails.*, reports  reports,,x ")).toEqual(["emails.*", "reports", "x"]);
    expect(splitPatterns("")).toEqual([]);
  });
});

describe("permission rows", () => {
  it("spread one row per action and gather rows of the same scope back", () => {
    const ps = [
      { actions: ["job.read", "job.manage"], namespaces: ["prod"], queues: ["emails.*", "sms"] },
      { actions: ["queue.read"], namespaces: ["*"], queues: ["*"] },
    ];
    const rows = rowsOf(ps);
    expect(rows).toEqual([
      { action: "job.read", namespaces: "prod", queues: "emails.*, sms" },
      { action: "job.manage", namespaces: "prod", queues: "emails.*, sms" },
      { action: "queue.read", namespaces: "*", queues: "*" },
    ]);
    expect(permissionsOf(rows)).toEqual(ps);
  });
  it("reads empty patterns as every one, and drops repeated actions and rows without one", () => {
    expect(
      permissionsOf([
        { action: "job.read", namespaces: "", queues: " " },
        { action: "job.read", namespaces: "*", queues: "*" },
        { action: "", namespaces: "a", queues: "b" },
        { action: "key.read", namespaces: "*", queues: "*" },
      ]),
    ).toEqual([{ actions: ["job.read", "key.read"], namespaces: ["*"], queues: ["*"] }]);
  });
});

describe("roleNameError", () => {
  it("mirrors tenancy.ValidateRoleName", () => {
    expect(roleNameError("support-2")).toBe("");
    expect(roleNameError("Support")).not.toBe("");
    expect(roleNameError("-x")).not.toBe("");
    expect(roleNameError("viewer")).toContain("built-in");
    expect(roleNameError("operator")).toContain("built-in");
  });
});

it("offers every action, every family and everything", () => {
  expect(ACTION_CHOICES[0]).toBe("*");
  expect(ACTION_CHOICES).toContain("job.*");
  expect(ACTION_CHOICES).toContain("usage.*");
  expect(ACTION_CHOICES).toContain("key.manage");
  expect(ACTION_CHOICES).toContain("backup.*");
  expect(ACTION_CHOICES).toContain("backup.manage");
  expect(new Set(ACTION_CHOICES).size).toBe(ACTION_CHOICES.length);
});
