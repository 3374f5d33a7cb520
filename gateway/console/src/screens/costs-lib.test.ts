import { describe, expect, it } from "vitest";
import {
  byCost,
  costPoints,
  costRangeOf,
  costSeries,
  costWindow,
  groupingOf,
  groupLabel,
  seriesPath,
  stepLabel,
  stepParam,
  totalsOf,
  usagePath,
  type AIUsage,
  type AIUsageGroup,
} from "./costs-lib";
import { usd } from "../lib/cost";

const g = (key: string, cost: string, tokens = 0): AIUsageGroup => ({
  key,
  reports: 1,
  input_tokens: tokens,
  output_tokens: 2 * tokens,
  cache_read_tokens: 3,
  cache_write_tokens: 4,
  cost_usd: cost,
});

describe("ranges", () => {
  const now = Date.parse("2026-11-24T16:30:00Z");
  it("are whole UTC days ending tonight", () => {
    expect(costWindow("today", now)).toEqual({ from: Date.parse("2026-11-24T00:00:00Z"), to: Date.parse("2026-11-25T00:00:00Z") });
    expect(new Date(costWindow("7d", now).from).toISOString()).toBe("2026-11-18T00:00:00.000Z");
    expect(new Date(costWindow("30d", now).from).toISOString()).toBe("2026-10-26T00:00:00.000Z");
  });
  it("step by hour for today, up to the hour now is in", () => {
    const s = costSeries(costWindow("today", now), now);
    expect(s).toEqual({ from: Date.parse("2026-11-24T00:00:00Z"), to: Date.parse("2026-11-24T17:00:00Z"), step: 3_600_000 });
    // On the hour, that hour is the last step.
    const midnight = Date.parse("2026-11-24T00:00:00Z");
    expect(costSeries(costWindow("today", midnight), midnight).to).toBe(Date.parse("2026-11-24T01:00:00Z"));
  });
  it("step by day otherwise, today last", () => {
    const s = costSeries(costWindow("30d", now), now);
    expect(s).toEqual({ from: Date.parse("2026-10-26T00:00:00Z"), to: Date.parse("2026-11-25T00:00:00Z"), step: 86_400_000 });
  });
  it("ask for the whole series in one request, by queue", () => {
    expect(stepParam(3_600_000)).toBe("1h");
    expect(stepParam(86_400_000)).toBe("1d");
    expect(stepParam(6 * 3_600_000)).toBe("6h");
    expect(seriesPath(costSeries(costWindow("7d", now), now))).toBe(
      "/api/v1/ai/usage?from=2026-11-18T00%3A00%3A00.000Z&to=2026-11-25T00%3A00%3A00.000Z&group_by=queue&step=1d",
    );
  });
  it("read the URL, defaulting", () => {
    expect(costRangeOf("30d")).toBe("30d");
    expect(costRangeOf("x")).toBe("7d");
    expect(groupingOf("model")).toBe("model");
    expect(groupingOf(null)).toBe("queue");
  });
  it("ask the API for the window", () => {
    expect(usagePath({ from: Date.parse("2026-11-24T00:00:00Z"), to: Date.parse("2026-11-25T00:00:00Z") }, "tag")).toBe(
      "/api/v1/ai/usage?from=2026-11-24T00%3A00%3A00.000Z&to=2026-11-25T00%3A00%3A00.000Z&group_by=tag",
    );
  });
});

describe("totals", () => {
  it("add tokens and cost exactly", () => {
    const t = totalsOf([g("a", "0.1", 10), g("b", "0.2", 5), g("c", "0.000000001")]);
    expect(usd(t.cost)).toBe("$0.300000001");
    expect(t).toMatchObject({ reports: 3, input: 15, output: 30, cacheRead: 9, cacheWrite: 12 });
    expect(totalsOf([]).cost).toBe(0n);
  });
  it("order by cost, then key", () => {
    expect(byCost([g("a", "0.5"), g("b", "12"), g("c", "0.5"), g("d", "3.25")]).map((x) => x.key)).toEqual(["b", "d", "a", "c"]);
  });
});

describe("points", () => {
  const s = { from: Date.parse("2026-11-24T00:00:00Z"), to: Date.parse("2026-11-24T03:00:00Z"), step: 3_600_000 };
  const answer = (over: Partial<AIUsage> = {}): AIUsage => ({
    from: "2026-11-24T00:00:00Z",
    to: "2026-11-24T03:00:00Z",
    group_by: "queue",
    groups: [g("a", "0.300000001"), g("b", "0.2")],
    step: "1h",
    buckets: [
      { start: "2026-11-24T00:00:00Z", groups: [g("a", "0.1"), g("b", "0.2")] },
      { start: "2026-11-24T01:00:00Z", groups: [] },
      { start: "2026-11-24T02:00:00Z", groups: [g("a", "0.200000001")] },
    ],
    ...over,
  });
  it("are each bucket's cost, summed exactly", () => {
    const p = costPoints(answer(), s)!;
    expect(p.map((x) => [new Date(x.start).toISOString(), usd(x.cost)])).toEqual([
      ["2026-11-24T00:00:00.000Z", "$0.30"],
      ["2026-11-24T01:00:00.000Z", "$0.00"],
      ["2026-11-24T02:00:00.000Z", "$0.200000001"],
    ]);
  });
  it("are not another series' answer", () => {
    expect(costPoints(answer({ step: "1d" }), s)).toBeUndefined();
    expect(costPoints(answer({ from: "2026-11-23T00:00:00Z" }), s)).toBeUndefined();
    expect(costPoints(answer({ to: "2026-11-24T04:00:00Z" }), s)).toBeUndefined();
    expect(costPoints(answer({ step: undefined, buckets: undefined }), s)).toBeUndefined();
  });
});

describe("labels", () => {
  it("name a group without a model, and steps in UTC", () => {
    expect(groupLabel("model", "")).toBe("(no model)");
    expect(groupLabel("queue", "llm")).toBe("llm");
    expect(stepLabel(Date.parse("2026-11-24T09:00:00Z"), 3_600_000)).toBe("09:00");
    expect(stepLabel(Date.parse("2026-11-24T00:00:00Z"), 86_400_000)).toBe("11-24");
  });
});
