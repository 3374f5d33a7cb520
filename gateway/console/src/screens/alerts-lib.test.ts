import { describe, expect, it } from "vitest";
import { ApiError } from "../api";
import { alertBody, alertForm, conditionText, firingRules, lastValue, stateOf, toggled, valueText, type AlertRule } from "./alerts-lib";

const rule: AlertRule = {
  name: "emails-backlog",
  kind: "queue_depth_above",
  queue: "emails",
  threshold: 1000,
  for: "5m",
  enabled: true,
  state: "ok",
  firing: [],
  values: [{ queue: "emails", value: 12 }],
  evaluated_at: "2026-11-29T05:41:00Z",
  created_at: "2026-11-29T05:00:00Z",
  updated_at: "2026-11-29T05:00:00Z",
};

const rate: AlertRule = { ...rule, name: "mail-failing", kind: "failure_rate_above", threshold: 12.5, for: "10m", min_count: 40 };

describe("the rule form", () => {
  it("starts a new rule on queue depth, every queue, enabled", () => {
    expect(alertForm(null)).toEqual({ name: "", kind: "queue_depth_above", queue: "", threshold: "", for: "5m", min_count: "", enabled: true });
  });
  it("reads a rule back into the same request, without its name on a replace", () => {
    expect(alertBody(alertForm(rule), true)).toEqual({ name: "emails-backlog", kind: "queue_depth_above", queue: "emails", threshold: 1000, for: "5m", enabled: true });
    expect(alertBody(alertForm(rule), false)).toEqual({ kind: "queue_depth_above", queue: "emails", threshold: 1000, for: "5m", enabled: true });
    expect(alertBody(alertForm(rate), false)).toEqual({ kind: "failure_rate_above", queue: "emails", threshold: 12.5, for: "10m", min_count: 40, enabled: true });
  });
  it("sends no threshold for the kinds measured in time, and no min_count but for the failure rate", () => {
    const f = { ...alertForm(rule), kind: "no_worker", threshold: "5", min_count: "3" };
    expect(alertBody(f, false)).toEqual({ kind: "no_worker", queue: "emails", for: "5m", enabled: true });
  });
  it("leaves the queue out when it is blank: every queue", () => {
    expect(alertBody({ ...alertForm(rule), queue: "  " }, false)).not.toHaveProperty("queue");
  });
  it("names the field of a number that is none, and leaves every other check to the server", () => {
    const e = alertBody({ ...alertForm(rule), threshold: "lots" }, false);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).field).toBe("threshold");
    const m = alertBody({ ...alertForm(rate), min_count: "2.5" }, false);
    expect((m as ApiError).field).toBe("min_count");
    expect(alertBody({ ...alertForm(rule), threshold: "-3", for: "forever" }, false)).toMatchObject({ threshold: -3, for: "forever" });
  });
  it("toggles a rule and keeps every other setting", () => {
    expect(toggled(rule)).toEqual({ kind: "queue_depth_above", queue: "emails", threshold: 1000, for: "5m", enabled: false });
    expect(toggled({ ...rate, enabled: false })).toMatchObject({ enabled: true, min_count: 40, threshold: 12.5 });
  });
});

describe("a rule's state", () => {
  const firing: AlertRule = {
    ...rule,
    queue: "",
    state: "firing",
    since: "2026-11-29T05:40:15Z",
    firing: [{ queue: "b", since: "2026-11-29T05:40:15Z", value: 1204 }],
    values: [
      { queue: "a", value: 5000 },
      { queue: "b", value: 1377 },
    ],
  };
  it("reads ok, firing (on how many queues) and off", () => {
    expect(stateOf(rule).label).toBe("ok");
    expect(stateOf(firing).label).toBe("firing");
    expect(stateOf({ ...firing, firing: [...firing.firing!, { queue: "c", since: firing.since!, value: 2000 }] }).label).toBe("firing on 2 queues");
    expect(stateOf({ ...firing, enabled: false }).cls).toBe("off");
  });
  it("shows the last value of the queue it fires on, else the highest measured, else none", () => {
    expect(lastValue(firing)).toEqual({ queue: "b", value: 1377 });
    expect(lastValue({ ...firing, values: [] })).toEqual({ queue: "b", value: 1204 });
    expect(lastValue({ ...firing, firing: [], state: "ok" })).toEqual({ queue: "a", value: 5000 });
    expect(lastValue({ ...rule, values: null })).toBeUndefined();
  });
  it("lists the firing rules, the longest firing first", () => {
    const later = { ...firing, name: "later", since: "2026-11-29T06:00:00Z" };
    expect(firingRules([later, rule, firing]).map((r) => r.name)).toEqual(["emails-backlog", "later"]);
  });
  it("writes values and conditions in the kind's unit", () => {
    expect(valueText("queue_depth_above", 1)).toBe("1 job");
    expect(valueText("queue_depth_above", 1377)).toBe("1,377 jobs");
    expect(valueText("failure_rate_above", 33.3333)).toBe("33.33 %");
    expect(valueText("no_worker", 90)).toBe("90 s");
    expect(conditionText(rule)).toBe("more than 1,000 pending for 5m");
    expect(conditionText(rate)).toBe("more than 12.5 % died over 10m (of at least 40)");
    expect(conditionText({ ...rate, min_count: undefined })).toContain("at least 10");
  });
});
