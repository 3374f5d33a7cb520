import { describe, expect, it } from "vitest";
import { batchesPath, callbackText, chainStatus, firstPage, neighbours, turnPage, type Batch, type Chain, type ChainStep } from "./flows-lib";

describe("batch list paging", () => {
  it("asks for a page by limit and cursor", () => {
    expect(batchesPath(50, undefined)).toBe("/api/v1/batches?limit=50");
    expect(batchesPath(20, "YmF0Y2hf+/=")).toBe("/api/v1/batches?limit=20&cursor=YmF0Y2hf%2B%2F%3D");
  });
  it("goes on with the server's cursor and back without one", () => {
    let s = turnPage(firstPage, 2, "c1");
    expect(s).toEqual([undefined, "c1"]);
    s = turnPage(s, 3, "c2");
    expect(s).toEqual([undefined, "c1", "c2"]);
    expect(turnPage(s, 2, "ignored")).toEqual([undefined, "c1"]);
    expect(turnPage(s, 1, null)).toEqual([undefined]);
  });
  it("stays put past the last page or before the first", () => {
    expect(turnPage([undefined, "c1"], 3, null)).toEqual([undefined, "c1"]);
    expect(turnPage([undefined], 3, "c")).toEqual([undefined]);
    expect(turnPage([undefined, "c1"], 0, "c")).toEqual([undefined, "c1"]);
  });
});

const batch = (o: Partial<Batch>): Batch => ({
  id: "batch_1", total: 3, pending: 0, succeeded: 3, failed: 0, callback_queue: "done", callback_job_id: null, callback_state: null,
  created_at: null, completed_at: null, ...o,
});

describe("callbackText", () => {
  it("says what the callback waits for, then its job's state", () => {
    expect(callbackText(batch({ pending: 2 }))).toBe("waiting for 2 jobs");
    expect(callbackText(batch({ pending: 1 }))).toBe("waiting for 1 job");
    expect(callbackText(batch({ callback_job_id: "job_9", callback_state: "completed" }))).toBe("completed");
    expect(callbackText(batch({ callback_job_id: "job_9", callback_state: null }))).toBe("gone (pruned or deleted)");
  });
});

const step = (i: number, state: string | null): ChainStep => ({
  step: i, queue: "q" + i, job_id: state ? "job_" + i : null, job_queue: state ? "q" + i : null, state, created_at: null, completed_at: null,
});
const chain = (at: number, ...states: (string | null)[]): Chain => ({
  chain_id: "chain_1", step: at, steps: states.map((s, i) => step(i, s)), on_failure_queue: null, on_exit_queue: null,
});

describe("chains", () => {
  it("finds the neighbouring steps that have jobs", () => {
    expect(neighbours(chain(0, "completed", "active", null))).toEqual({ prev: null, next: step(1, "active") });
    expect(neighbours(chain(1, "completed", "active", null))).toEqual({ prev: step(0, "completed"), next: null });
    expect(neighbours(chain(2, null, null, "pending"))).toEqual({ prev: null, next: null });
  });
  it("sums up where the chain stands", () => {
    expect(chainStatus(chain(0, "completed", "active", null))).toBe("at step 2 of 3 (active)");
    expect(chainStatus(chain(0, "completed", "completed", "completed"))).toBe("finished: all 3 steps completed");
    expect(chainStatus(chain(0, "completed", "dead", null))).toBe("stopped at step 2 of 3 (dead)");
    expect(chainStatus(chain(0, "completed", null, null))).toBe("no job after step 1 of 3 (stopped early, or pruned)");
    expect(chainStatus(chain(1, null, null))).toBe("2 steps; none found");
  });
});
