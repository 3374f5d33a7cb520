import { describe, expect, it } from "vitest";
import type { JobEvent } from "../hooks";
import { sparkLabel, sparkPoints } from "../components/sparkline";
import {
  byName,
  changesActiveJobs,
  clock,
  eventMatches,
  EventLog,
  failureTime,
  isFailure,
  matchWorker,
  perMinute,
  queueState,
  sortWorkers,
  totals,
  visibleQueues,
  type Queue,
  type Worker,
} from "./dashboard-lib";

const counts = { pending: 0, scheduled: 0, active: 0, retrying: 0, completed: 0, dead: 0, cancelled: 0, held: 0 };
const queue = (name: string, over: Partial<Queue> = {}): Queue => ({
  name,
  description: "",
  counts: { ...counts },
  throughput: 0,
  paused: false,
  draining: false,
  drained: false,
  ...over,
});
const ev = (over: Partial<JobEvent> = {}): JobEvent => ({ type: "enqueued", job_id: "j", queue: "q", state: "pending", at: "2026-01-01T00:00:00Z", attempt: 0, ...over });

describe("queues", () => {
  it("sorts by name as code points", () => {
    expect(byName([queue("b"), queue("B"), queue("a.x"), queue("a")]).map((q) => q.name)).toEqual(["B", "a", "a.x", "b"]);
  });

  it("shows the first 50 of 1,000 unless all, and filters before limiting", () => {
    const all = Array.from({ length: 1000 }, (_, i) => queue("q" + String(999 - i).padStart(4, "0")));
    const first = visibleQueues(all, "", false);
    expect(first.rows).toHaveLength(50);
    expect(first.rows[0].name).toBe("q0000");
    expect(first.matched).toBe(1000);
    expect(first.hidden).toBe(950);
    expect(visibleQueues(all, "", true).rows).toHaveLength(1000);
    const f = visibleQueues(all, " Q099 ", false);
    expect(f.rows.map((q) => q.name)).toEqual(["q0990", "q0991", "q0992", "q0993", "q0994", "q0995", "q0996", "q0997", "q0998", "q0999"]);
    expect(f.hidden).toBe(0);
  });

  it("adds counts and rates", () => {
    const t = totals([
      queue("a", { counts: { ...counts, pending: 2, dead: 1, completed: 10 }, throughput: 1.5 }),
      queue("b", { counts: { ...counts, pending: 3, active: 4, retrying: 1 }, throughput: 2 }),
    ]);
    expect(t).toEqual({ queues: 2, pending: 5, scheduled: 0, active: 4, retrying: 1, completed: 10, dead: 1, rate: 3.5 });
  });

  it("names the state that says most", () => {
    expect(queueState({ paused: false, draining: false, drained: false })).toBe("running");
    expect(queueState({ paused: true, draining: false, drained: false })).toBe("paused");
    expect(queueState({ paused: true, draining: true, drained: false })).toBe("draining");
    expect(queueState({ paused: true, draining: true, drained: true })).toBe("drained");
  });

  it("writes rates per minute", () => {
    expect(perMinute(0)).toBe("0/min");
    expect(perMinute(0.44)).toBe("0.4/min");
    expect(perMinute(2)).toBe("2/min");
    expect(perMinute(124.4)).toBe("124/min");
    expect(perMinute(12400)).toBe("12.4k/min");
    expect(perMinute(undefined)).toBe("—");
  });
});

describe("failures", () => {
  it("takes the last error's time, else died, failed, updated", () => {
    const base = { id: "j", queue: "q", state: "dead", attempt: 3, max_retries: 4 };
    expect(failureTime({ ...base, errors: [{ attempt: 1, error: "x", at: "t1" }, { attempt: 2, error: "y", at: "t2" }], died_at: "t9" })).toBe("t2");
    expect(failureTime({ ...base, errors: null, died_at: "t9", failed_at: "t8" })).toBe("t9");
    expect(failureTime({ ...base, failed_at: "t8", updated_at: "t7" })).toBe("t8");
    expect(failureTime({ ...base, updated_at: "t7" })).toBe("t7");
    expect(failureTime(base)).toBeNull();
  });

  it("reloads on the events that may add or remove a failure", () => {
    expect(isFailure(ev({ type: "failed", state: "retrying" }))).toBe(true);
    expect(isFailure(ev({ type: "dead", state: "dead" }))).toBe(true);
    expect(isFailure(ev({ type: "completed", state: "completed" }))).toBe(false);
    expect(isFailure(ev({ type: "pending", state: "pending", from: "retrying" }))).toBe(true);
    expect(isFailure(ev({ type: "retried", state: "pending", from: "dead" }))).toBe(true);
    expect(isFailure(ev({ type: "started", state: "active", from: "pending" }))).toBe(false);
    expect(isFailure(ev())).toBe(false);
  });
});

describe("workers", () => {
  const w = (id: string, over: Partial<Worker> = {}): Worker => ({
    id,
    hostname: "host-" + id,
    queues: ["emails.send"],
    active_jobs: 0,
    active_job_ids: [],
    last_seen: "",
    status: "active",
    ...over,
  });

  it("filters by id, host, queue and status", () => {
    expect(matchWorker(w("w1"), "")).toBe(true);
    expect(matchWorker(w("w1"), "W1")).toBe(true);
    expect(matchWorker(w("w1"), "host-w")).toBe(true);
    expect(matchWorker(w("w1"), "emails")).toBe(true);
    expect(matchWorker(w("w1"), "billing")).toBe(false);
    expect(matchWorker(w("w1", { queues: null }), "emails")).toBe(false);
    expect(matchWorker(w("w1"), "", "gone")).toBe(false);
    expect(matchWorker(w("w1", { status: "gone" }), "w1", "gone")).toBe(true);
  });

  it("lists active workers first, then by id", () => {
    expect(sortWorkers([w("c", { status: "gone" }), w("b"), w("a", { status: "gone" }), w("a2")]).map((x) => x.id)).toEqual(["a2", "b", "a", "c"]);
  });

  it("reloads when an attempt starts or ends", () => {
    expect(changesActiveJobs(ev({ type: "started", state: "active", from: "pending" }))).toBe(true);
    expect(changesActiveJobs(ev({ type: "completed", state: "completed", from: "active" }))).toBe(true);
    expect(changesActiveJobs(ev({ type: "failed", state: "retrying", from: "active" }))).toBe(true);
    expect(changesActiveJobs(ev())).toBe(false);
  });
});

describe("live events", () => {
  it("filters by queue substring and type", () => {
    const e = ev({ queue: "emails.send", type: "completed" });
    expect(eventMatches(e, { queue: "", type: "" })).toBe(true);
    expect(eventMatches(e, { queue: "EMAILS", type: "" })).toBe(true);
    expect(eventMatches(e, { queue: "billing", type: "" })).toBe(false);
    expect(eventMatches(e, { queue: "", type: "completed" })).toBe(true);
    expect(eventMatches(e, { queue: "emails", type: "enqueued" })).toBe(false);
  });

  it("keeps the newest first, at most cap", () => {
    const log = new EventLog(3);
    for (let i = 1; i <= 5; i++) log.push(ev({ job_id: "j" + i }));
    expect(log.rows.map((e) => e.job_id)).toEqual(["j5", "j4", "j3"]);
  });

  it("holds arrivals aside while paused and puts them on top on resume", () => {
    const log = new EventLog(4);
    log.push(ev({ job_id: "a" }));
    log.push(ev({ job_id: "b" }));
    log.pause();
    log.push(ev({ job_id: "c", queue: "x" }));
    log.push(ev({ job_id: "d" }));
    log.push(ev({ job_id: "e" }));
    expect(log.rows.map((e) => e.job_id)).toEqual(["b", "a"]);
    expect(log.heldMatching(() => true)).toBe(3);
    expect(log.heldMatching((e) => e.queue === "x")).toBe(1);
    log.resume();
    expect(log.paused).toBe(false);
    expect(log.rows.map((e) => e.job_id)).toEqual(["e", "d", "c", "b"]);
    expect(log.heldMatching(() => true)).toBe(0);
  });

  it("caps what it holds while paused", () => {
    const log = new EventLog(2);
    log.pause();
    for (let i = 1; i <= 5; i++) log.push(ev({ job_id: "j" + i }));
    expect(log.heldMatching(() => true)).toBe(2);
    log.resume();
    expect(log.rows.map((e) => e.job_id)).toEqual(["j5", "j4"]);
    log.clear();
    expect(log.rows).toEqual([]);
  });

  it("writes the time of day to the millisecond", () => {
    const d = new Date(2026, 0, 2, 3, 4, 5, 6);
    expect(clock(d.toISOString())).toBe("03:04:05.006");
    expect(clock("nonsense")).toBe("—");
  });
});

describe("sparkline", () => {
  it("spreads the values across the box, oldest left, zero at the bottom", () => {
    const pts = sparkPoints([0, 5, 10], 22, 12, 1);
    expect(pts).toEqual([
      [1, 11],
      [11, 6],
      [21, 1],
    ]);
  });

  it("lays equal values flat at the bottom, and one value in the middle", () => {
    expect(sparkPoints([0, 0, 0], 10, 10, 0).map(([, y]) => y)).toEqual([10, 10, 10]);
    expect(sparkPoints([3], 10, 10, 0)).toEqual([[5, 0]]);
    expect(sparkPoints([], 10, 10)).toEqual([]);
  });

  it("reads the numbers out", () => {
    expect(sparkLabel([1, 4, 2])).toBe("completions per minute: 1, 4, 2");
    expect(sparkLabel([0], "runs")).toBe("runs: 0");
  });
});
