import { describe, expect, it } from "vitest";
import { formatPushMode, pushChange, pushForm, specOf, type Queue, type QueuePush } from "./queue-lib";

const push: QueuePush = {
  url: "https://hooks.example.com/jobs",
  mode: "when_no_workers",
  timeout: "45s",
  max_in_flight: 3,
  headers: { "X-Team": "mail", Authorization: "Bearer s3cret" },
  disabled: { reason: "the handler answered 410 Gone", at: "2026-11-28T12:00:00Z" },
};

function queue(over: Partial<Queue> = {}): Queue {
  return {
    name: "q",
    description: "d",
    counts: { pending: 0, scheduled: 0, active: 0, retrying: 0, completed: 0, dead: 0, cancelled: 0, held: 0 },
    throughput: 0,
    oldest_pending_age: 0,
    paused: false,
    draining: false,
    drained: false,
    concurrency: 2,
    throttle: null,
    defaults: null,
    ...over,
  };
}

describe("specOf and push", () => {
  it("keeps a push queue's settings when another setting changes (a PUT without push makes a pull queue)", () => {
    expect(specOf(queue({ push }), { description: "e" }).push).toEqual({
      url: "https://hooks.example.com/jobs",
      mode: "when_no_workers",
      timeout: "45s",
      max_in_flight: 3,
      headers: { "X-Team": "mail", Authorization: "Bearer s3cret" },
    });
  });
  it("sends no push for a pull queue, and none when asked to remove it", () => {
    expect(specOf(queue()).push).toBeNull();
    expect(specOf(queue({ push: null })).push).toBeNull();
    expect(specOf(queue({ push }), { push: null })).toMatchObject({ description: "d", concurrency: 2, push: null });
  });
});

describe("the push form", () => {
  it("reads a queue's settings, headers sorted one a line", () => {
    expect(pushForm(push)).toEqual({
      url: "https://hooks.example.com/jobs",
      mode: "when_no_workers",
      timeout: "45s",
      max_in_flight: "3",
      headers: "Authorization: Bearer s3cret\nX-Team: mail",
    });
    expect(pushForm(null)).toEqual({ url: "", mode: "always", timeout: "30s", max_in_flight: "10", headers: "" });
  });
  it("round-trips: the form of a queue sends its settings back", () => {
    expect(pushChange(pushForm(push)).push).toEqual(specOf(queue({ push })).push);
  });
  it("sends what was typed for the server to judge; blank lines skipped, values may hold colons", () => {
    const f = { url: " https://h.example.com/x ", mode: "always", timeout: "", max_in_flight: "ten", headers: "\nX-A: b:c\n\n  Y-B:  z  \n" };
    expect(pushChange(f)).toEqual({
      push: { url: "https://h.example.com/x", mode: "always", timeout: null, max_in_flight: "ten", headers: { "X-A": "b:c", "Y-B": "z" } },
    });
  });
  it("refuses a header line without a name before anything is sent, naming the line", () => {
    const f = { url: "https://h.example.com/", mode: "always", timeout: "30s", max_in_flight: "10", headers: "X-A: 1\nno colon here" };
    expect(() => pushChange(f)).toThrow("push.headers: line 2 (“no colon here”) is not “Name: value”");
    expect(() => pushChange({ ...f, headers: ": value" })).toThrow("push.headers: line 1");
  });
  it("says what a mode does", () => {
    expect(formatPushMode("always")).toBe("every job pushed");
    expect(formatPushMode("when_no_workers")).toBe("pushed while no worker fetches (spill-over)");
  });
});
