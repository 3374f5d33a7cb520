import { describe, expect, it } from "vitest";
import { durationSeconds, goDuration, namespaceNameError, retentionBody, retentionInput, retentionLabel } from "./namespace-util";

describe("durationSeconds", () => {
  it("reads Go durations and days and weeks", () => {
    expect(durationSeconds("168h")).toBe(604800);
    expect(durationSeconds("1h30m")).toBe(5400);
    expect(durationSeconds("1.5h")).toBe(5400);
    expect(durationSeconds("7d")).toBe(604800);
    expect(durationSeconds("2w1d")).toBe(15 * 86400);
    expect(durationSeconds("500ms")).toBe(0.5);
  });
  it("is NaN for anything else", () => {
    for (const s of ["", "7", "h", "7 days", "1h x", "-1h"]) expect(durationSeconds(s)).toBeNaN();
  });
});

describe("retentionBody", () => {
  it("is null for nothing, a number for seconds, hours for days", () => {
    expect(retentionBody("  ")).toBeNull();
    expect(retentionBody("3600")).toBe(3600);
    expect(retentionBody("7d")).toBe("168h");
    expect(retentionBody("1d12h")).toBe("36h");
    expect(retentionBody("2w")).toBe("336h");
    expect(retentionBody("90m")).toBe("90m");
    expect(retentionBody("nonsense")).toBe("nonsense");
  });
});

describe("goDuration", () => {
  it("writes Go's form", () => {
    expect(goDuration(604800)).toBe("168h");
    expect(goDuration(5400)).toBe("1h30m");
    expect(goDuration(90)).toBe("1m30s");
    expect(goDuration(0)).toBe("0s");
  });
});

describe("retention for people", () => {
  it("labels whole days and leaves the rest", () => {
    expect(retentionLabel(undefined)).toBe("—");
    expect(retentionLabel("168h")).toBe("7 days");
    expect(retentionLabel("24h")).toBe("1 day");
    expect(retentionLabel("36h")).toBe("36h");
    expect(retentionInput("168h")).toBe("7d");
    expect(retentionInput("1h30m")).toBe("1h30m");
    expect(retentionInput(undefined)).toBe("");
  });
});

it("checks namespace names as tenancy.ValidateNamespace does", () => {
  expect(namespaceNameError("prod-2")).toBe("");
  expect(namespaceNameError("Prod")).not.toBe("");
  expect(namespaceNameError("")).not.toBe("");
  expect(namespaceNameError("a".repeat(64))).not.toBe("");
});
