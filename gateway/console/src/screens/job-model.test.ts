import { describe, expect, it } from "vitest";
import { actionsFor, attemptLabel, attemptOf, attemptsOf, between, clock, dur, parseStarted, progressOf, timelineText, utc } from "./job-model";

describe("actionsFor", () => {
  it("follows the API's rules per state", () => {
    expect(actionsFor("dead")).toEqual({ retry: true, cancel: false, move: true, del: true });
    expect(actionsFor("completed")).toEqual({ retry: true, cancel: false, move: true, del: true });
    expect(actionsFor("pending")).toEqual({ retry: false, cancel: true, move: true, del: true });
    expect(actionsFor("held")).toEqual({ retry: false, cancel: true, move: true, del: true });
    expect(actionsFor("active")).toEqual({ retry: false, cancel: true, move: false, del: false });
    expect(actionsFor("active", true)).toEqual({ retry: false, cancel: false, move: false, del: false });
  });
  it("counts attempts out of max_retries + 1", () => {
    expect(attemptLabel(2, 4)).toBe("attempt 2 of 5");
    expect(attemptOf({ attempt: 3, max_retries: 4 })).toBe("3/5");
    expect(attemptOf({ attempt: 1, max_retries: 0 })).toBe("1/1");
  });
});

describe("attemptsOf", () => {
  const t = (s: number, ms = 0) => new Date(Date.UTC(2026, 1, 11, 10, 0, s, ms)).toISOString();
  it("rebuilds attempts from the timeline and the errors", () => {
    const rows = attemptsOf({
      state: "dead",
      attempt: 2,
      errors: [
        { attempt: 1, error: "SMTP timeout", backtrace: "at send()", at: t(4) },
        { attempt: 2, error: "connection refused", at: t(20) },
      ],
      timeline: [
        { at: t(0), event: "enqueued" },
        { at: t(1), event: "started", detail: "worker w-1 attempt 1" },
        { at: t(4), event: "failed", detail: "SMTP timeout" },
        { at: t(4), event: "retry_scheduled", detail: t(14) },
        { at: t(14), event: "started", detail: "worker w-2 attempt 2" },
        { at: t(20), event: "failed", detail: "connection refused" },
        { at: t(20), event: "dead", detail: "retries_exhausted" },
      ],
    });
    expect(rows).toEqual([
      { n: 1, start: t(1), end: t(4), worker: "w-1", outcome: "failed", error: "SMTP timeout", backtrace: "at send()" },
      { n: 2, start: t(14), end: t(20), worker: "w-2", outcome: "failed", error: "connection refused", backtrace: undefined },
    ]);
  });
  it("shows a running attempt, a completed one and a lost lease", () => {
    const rows = attemptsOf({
      state: "active",
      attempt: 3,
      errors: [{ attempt: 1, error: "lease_expired", at: t(5) }],
      timeline: [
        { at: t(1), event: "started", detail: "attempt 1" },
        { at: t(5), event: "lease_expired", detail: "attempt 1" },
        { at: t(6), event: "started", detail: "worker w attempt 2" },
        { at: t(7), event: "completed" },
        { at: t(8), event: "retried" },
        { at: t(9), event: "started", detail: "worker w attempt 1" },
      ],
    });
    expect(rows.map((r) => [r.n, r.outcome, r.error])).toEqual([
      [1, "lease expired", "lease_expired"],
      [2, "completed", undefined],
      [1, "running", undefined],
    ]);
  });
  it("keeps errors whose entries fell off the timeline", () => {
    const rows = attemptsOf({
      state: "retrying",
      attempt: 2,
      errors: [{ attempt: 1, error: "old", at: t(1) }],
      timeline: [{ at: t(9), event: "started", detail: "attempt 2" }, { at: t(10), event: "failed", detail: "new" }],
    });
    expect(rows.map((r) => [r.n, r.error])).toEqual([
      [1, "old"],
      [2, "new"],
    ]);
  });
  it("parses started details", () => {
    expect(parseStarted("worker host-1 pid 4 attempt 12")).toEqual({ worker: "host-1 pid 4", attempt: 12 });
    expect(parseStarted("attempt 1")).toEqual({ worker: undefined, attempt: 1 });
    expect(parseStarted("something")).toEqual({});
  });
});

describe("formatting", () => {
  it("writes times and durations", () => {
    expect(utc("2026-02-11T10:00:01.5Z")).toBe("2026-02-11 10:00:01 UTC");
    expect(utc(null)).toBe("—");
    expect(clock("2026-02-11T10:00:04.301234567Z")).toBe("10:00:04.301");
    expect(dur(850)).toBe("850ms");
    expect(dur(4200)).toBe("4.2s");
    expect(dur(4000)).toBe("4s");
    expect(dur(42_000)).toBe("42s");
    expect(dur(185_000)).toBe("3m 5s");
    expect(dur(2 * 3600_000 + 600_000)).toBe("2h 10m");
    expect(dur(76 * 3600_000)).toBe("3d 4h");
    expect(between("2026-02-11T10:00:00Z", "2026-02-11T10:00:01Z")).toBe("1s");
    expect(between(null, "2026-02-11T10:00:01Z")).toBe("");
    expect(between("2026-02-11T10:00:00Z", null, Date.parse("2026-02-11T10:01:00Z"))).toBe("1m 0s");
  });
  it("reads progress of the console's shape only", () => {
    expect(progressOf({ current: 450, total: 1000, message: "Sending" })).toEqual({ current: 450, total: 1000, message: "Sending", pct: 45 });
    expect(progressOf({ current: 3, total: 0 })).toEqual({ current: 3, total: 0 });
    expect(progressOf({ current: 1500, total: 1000 })?.pct).toBe(100);
    expect(progressOf({ done: 1 })).toBeNull();
    expect(progressOf(null)).toBeNull();
    expect(progressOf([1, 2])).toBeNull();
  });
  it("writes timeline entries as sentences", () => {
    const at = "2026-02-11T10:00:04.301Z";
    expect(timelineText({ at, event: "enqueued" })).toBe("enqueued");
    expect(timelineText({ at, event: "enqueued", detail: "scheduled for 2026-02-12T09:00:00Z" })).toBe("enqueued, scheduled for 2026-02-12 09:00:00 UTC");
    expect(timelineText({ at, event: "started", detail: "worker w-1 attempt 2" })).toBe("started by w-1 (attempt 2)");
    expect(timelineText({ at, event: "failed", detail: "SMTP timeout" })).toBe("failed: SMTP timeout");
    expect(timelineText({ at, event: "retry_scheduled", detail: "2026-02-11T10:00:14.301Z" })).toBe(
      "retry scheduled for 2026-02-11 10:00:14 UTC (in 10s)",
    );
    expect(timelineText({ at, event: "retry_scheduled", detail: at })).toBe("back to pending for another attempt");
    expect(timelineText({ at, event: "progress", detail: '{"current":100,"total":1000,"message":"Sending"}' })).toBe('progress: 100/1000 "Sending"');
    expect(timelineText({ at, event: "progress", detail: '{"pct":5}' })).toBe('progress: {"pct":5}');
    expect(timelineText({ at, event: "moved", detail: "a → b" })).toBe("moved a → b");
    expect(timelineText({ at, event: "dead", detail: "retries_exhausted" })).toBe("dead: retries_exhausted");
    expect(timelineText({ at, event: "future_kind", detail: "x" })).toBe("future_kind: x");
  });
});
