import { describe, expect, it } from "vitest";
import { ApiError } from "../api";
import {
  clearable,
  concurrencyBody,
  defaultsBody,
  defaultsForm,
  errorText,
  filterQueues,
  formatAge,
  formatKeyConcurrency,
  formatRate,
  keyConcurrencyChange,
  nextSort,
  paginate,
  queueHref,
  readListQuery,
  sortQueues,
  specOf,
  statusOf,
  throttleBody,
  totalJobs,
  writeListQuery,
  type Queue,
} from "./queue-lib";

function q(name: string, over: Partial<Queue> = {}, counts: Partial<Queue["counts"]> = {}): Queue {
  return {
    name,
    description: "",
    counts: { pending: 0, scheduled: 0, active: 0, retrying: 0, completed: 0, dead: 0, cancelled: 0, held: 0, ...counts },
    throughput: 0,
    oldest_pending_age: 0,
    paused: false,
    draining: false,
    drained: false,
    concurrency: null,
    throttle: null,
    defaults: null,
    ...over,
  };
}

describe("sortQueues", () => {
  const qs = [q("b", { throughput: 5 }, { pending: 3 }), q("a", { throughput: 9 }, { pending: 3 }), q("c", {}, { pending: 10 })];
  it("sorts names A→Z and back", () => {
    expect(sortQueues(qs, "name", "asc").map((x) => x.name)).toEqual(["a", "b", "c"]);
    expect(sortQueues(qs, "name", "desc").map((x) => x.name)).toEqual(["c", "b", "a"]);
  });
  it("sorts counts, ties by name either way", () => {
    expect(sortQueues(qs, "pending", "desc").map((x) => x.name)).toEqual(["c", "a", "b"]);
    expect(sortQueues(qs, "pending", "asc").map((x) => x.name)).toEqual(["a", "b", "c"]);
    expect(sortQueues(qs, "rate", "desc").map((x) => x.name)).toEqual(["a", "b", "c"]);
  });
  it("does not change its input", () => {
    sortQueues(qs, "name", "asc");
    expect(qs.map((x) => x.name)).toEqual(["b", "a", "c"]);
  });
});

describe("list state", () => {
  it("filters names in any case", () => {
    expect(filterQueues([q("emails.send"), q("Reports"), q("billing")], "  EMA ").map((x) => x.name)).toEqual(["emails.send"]);
    expect(filterQueues([q("a"), q("b")], "")).toHaveLength(2);
  });
  it("pages 50 at a time, clamping the page", () => {
    const items = Array.from({ length: 120 }, (_, i) => i);
    expect(paginate(items, 1)).toMatchObject({ page: 1, pages: 3 });
    expect(paginate(items, 3).items).toEqual(items.slice(100));
    expect(paginate(items, 9).page).toBe(3);
    expect(paginate([], 4)).toEqual({ items: [], page: 1, pages: 1 });
  });
  it("reads and writes the URL, leaving defaults out", () => {
    expect(readListQuery(new URLSearchParams(""))).toEqual({ q: "", sort: "name", dir: "asc", page: 1 });
    expect(readListQuery(new URLSearchParams("sort=pending&page=2&q=x"))).toEqual({ q: "x", sort: "pending", dir: "desc", page: 2 });
    expect(readListQuery(new URLSearchParams("sort=bogus&dir=up&page=-3"))).toEqual({ q: "", sort: "name", dir: "asc", page: 1 });
    expect(writeListQuery({ q: "", sort: "name", dir: "asc", page: 1 }).toString()).toBe("");
    expect(writeListQuery({ q: "e", sort: "pending", dir: "asc", page: 2 }).toString()).toBe("q=e&sort=pending&dir=asc&page=2");
  });
  it("a header click flips its column or starts another at its first direction", () => {
    expect(nextSort({ sort: "name", dir: "asc" }, "pending")).toEqual({ sort: "pending", dir: "desc" });
    expect(nextSort({ sort: "pending", dir: "desc" }, "pending")).toEqual({ sort: "pending", dir: "asc" });
    expect(nextSort({ sort: "pending", dir: "desc" }, "name")).toEqual({ sort: "name", dir: "asc" });
  });
});

describe("formatting", () => {
  it("writes ages", () => {
    expect(formatAge(0)).toBe("—");
    expect(formatAge(0.2)).toBe("<1s");
    expect(formatAge(45.7)).toBe("45s");
    expect(formatAge(200)).toBe("3m 20s");
    expect(formatAge(120)).toBe("2m");
    expect(formatAge(7500)).toBe("2h 5m");
    expect(formatAge(3 * 86400 + 4 * 3600 + 5)).toBe("3d 4h");
  });
  it("writes rates", () => {
    expect(formatRate(124.4)).toBe("124/min");
    expect(formatRate(0.44)).toBe("0.4/min");
    expect(formatRate(1234)).toBe("1,234/min");
  });
  it("names the status", () => {
    expect(statusOf({ paused: false, draining: false, drained: false })).toBe("active");
    expect(statusOf({ paused: true, draining: false, drained: false })).toBe("paused");
    expect(statusOf({ paused: true, draining: true, drained: false })).toBe("draining");
    expect(statusOf({ paused: true, draining: true, drained: true })).toBe("drained");
  });
  it("links a state filter", () => {
    expect(queueHref("emails send")).toBe("/queues/emails%20send");
    expect(queueHref("a", "dead")).toBe("/queues/a?state=dead");
  });
});

describe("counts", () => {
  it("a clear takes pending, scheduled and retrying", () => {
    const c = q("a", {}, { pending: 4, scheduled: 2, retrying: 1, active: 7, dead: 3, held: 5 }).counts;
    expect(clearable(c)).toBe(7);
    expect(totalJobs(c)).toBe(22);
  });
});

describe("request bodies", () => {
  it("sends what was typed for the server to judge", () => {
    expect(concurrencyBody(" 2 ")).toEqual({ max: 2 });
    expect(concurrencyBody("")).toEqual({ max: null });
    expect(concurrencyBody("two")).toEqual({ max: "two" });
    expect(throttleBody("100", "1m")).toEqual({ rate: 100, period: "1m" });
    expect(throttleBody("100", "60")).toEqual({ rate: 100, period: 60 });
    expect(throttleBody("x", "")).toEqual({ rate: "x", period: null });
  });
  it("round-trips defaults through the form", () => {
    const d = { max_retries: 5, retry_backoff: "linear", retry_base_delay: "1m30s", retry_max_delay: null, lease_duration: null, expire_after: "24h", retention: null };
    const f = defaultsForm(d);
    expect(f.max_retries).toBe("5");
    expect(f.retry_max_delay).toBe("");
    expect(defaultsBody(f)).toEqual(d);
    expect(defaultsBody({ ...f, retry_base_delay: "90" }).retry_base_delay).toBe(90);
    expect(defaultsForm(null).retention).toBe("");
  });
  it("builds the whole spec for PUT, changing only what is asked", () => {
    const cur = q("a", { description: "old", paused: true, concurrency: 3, throttle: { rate: 5, period: "1m" } });
    expect(specOf(cur, { description: "new" })).toEqual({
      description: "new",
      paused: true,
      concurrency: 3,
      key_concurrency: null,
      throttle: { rate: 5, period: "1m" },
      defaults: null,
      push: null,
    });
  });
  it("keeps the per-key cap when another setting changes, and changes only it when asked", () => {
    const cur = q("a", { description: "d", key_concurrency: { max: 2 } });
    expect(specOf(cur, { description: "e" }).key_concurrency).toEqual({ max: 2 });
    expect(specOf(cur, keyConcurrencyChange("5"))).toMatchObject({ description: "d", key_concurrency: { max: 5 } });
    expect(specOf(cur, keyConcurrencyChange(" "))).toMatchObject({ key_concurrency: null });
    // what is not an integer goes as typed, so the server's 400 names it
    expect(keyConcurrencyChange("two")).toEqual({ key_concurrency: { max: "two" } });
    expect(specOf(q("b")).key_concurrency).toBeNull();
  });
  it("writes the per-key cap", () => {
    expect(formatKeyConcurrency({ max: 1200 })).toBe("1,200 per key");
    expect(formatKeyConcurrency(null)).toBe("no limit");
    expect(formatKeyConcurrency(undefined)).toBe("no limit");
  });
});

describe("errorText", () => {
  it("names the field when the message does not", () => {
    expect(errorText(new ApiError(400, "bad_request", "must be at least 1", "max"))).toBe("max: must be at least 1");
    expect(errorText(new ApiError(400, "bad_request", "rate must be an integer", "rate"))).toBe("rate must be an integer");
    expect(errorText(new Error("boom"))).toBe("boom");
  });
});
