import { describe, expect, it } from "vitest";
import {
  attemptNotice,
  eventsText,
  latencyText,
  matches,
  queuesText,
  toggleEvent,
  webhookBody,
  webhookForm,
  webhookState,
  type Webhook,
  type WebhookDelivery,
} from "./webhooks-lib";

const hook: Webhook = {
  id: "wh_1",
  url: "https://hooks.example.com/j",
  events: ["job.completed", "job.dead"],
  queues: ["emails.*", "reports"],
  enabled: true,
  description: "mail outcomes",
  secret_ids: ["whs_1"],
  created_at: "2026-11-28T10:00:00Z",
  updated_at: "2026-11-28T11:00:00Z",
};

const attempt: WebhookDelivery = { event_id: "s1:42", type: "dev.jobbie.job.completed", at: "2026-11-28T12:00:00Z", status: 200, latency_ms: 3.25, attempt: 1, ok: true };

describe("the endpoint form", () => {
  it("starts a new endpoint on every event and queue, enabled, without a secret", () => {
    expect(webhookBody(webhookForm(null), true)).toEqual({ url: "", events: ["*"], queues: [], description: "", enabled: true });
  });
  it("reads an endpoint back into the same request, and never sends a secret on an edit", () => {
    const f = webhookForm(hook);
    expect(f).toMatchObject({ all: false, events: ["job.completed", "job.dead"], queues: "emails.*\nreports" });
    expect(webhookBody({ ...f, secret: true }, false)).toEqual({
      url: "https://hooks.example.com/j",
      events: ["job.completed", "job.dead"],
      queues: ["emails.*", "reports"],
      description: "mail outcomes",
      enabled: true,
    });
  });
  it("sends the events ticked in the list's order, queues one a line without blanks, and a secret on a create", () => {
    let f = { ...webhookForm(null), all: false, url: " https://h.example.com/ ", queues: " a \n\n b.*\r\n", secret: true };
    f = toggleEvent(toggleEvent(toggleEvent(f, "job.dead", true), "job.enqueued", true), "job.dead", true);
    expect(webhookBody(f, true)).toEqual({ url: "https://h.example.com/", events: ["job.enqueued", "job.dead"], queues: ["a", "b.*"], description: "", enabled: true, secret: true });
    expect(webhookBody(toggleEvent(f, "job.dead", false), true).events).toEqual(["job.enqueued"]);
  });
  it("sends no events when none is ticked, for the server to name the field", () => {
    expect(webhookBody({ ...webhookForm(null), all: false }, true).events).toEqual([]);
  });
  it("reads an endpoint of every event as all", () => {
    expect(webhookForm({ ...hook, events: ["*"] })).toMatchObject({ all: true, events: [] });
  });
});

describe("how an endpoint reads", () => {
  it("says off before disabled before failing", () => {
    const disabled = { reason: "failing for 72h0m0s", at: "2026-11-28T12:00:00Z" };
    expect(webhookState(hook).label).toBe("enabled");
    expect(webhookState({ ...hook, failing_since: "2026-11-28T12:00:00Z" }).label).toBe("failing");
    expect(webhookState({ ...hook, failing_since: "2026-11-28T12:00:00Z", disabled }).label).toBe("disabled");
    expect(webhookState({ ...hook, enabled: false, disabled }).label).toBe("off");
  });
  it("names events and queues shortly", () => {
    expect(eventsText(hook.events)).toBe("completed, dead");
    expect(eventsText(["*"])).toBe("all events");
    expect(queuesText([])).toBe("all queues");
    expect(queuesText(hook.queues)).toBe("emails.*, reports");
  });
  it("filters on URL, description, id, events and queues", () => {
    expect(matches(hook, "HOOKS.example")).toBe(true);
    expect(matches(hook, "outcomes")).toBe(true);
    expect(matches(hook, "reports")).toBe(true);
    expect(matches(hook, "job.dead")).toBe(true);
    expect(matches(hook, "billing")).toBe(false);
    expect(matches(hook, "  ")).toBe(true);
  });
});

describe("an attempt", () => {
  it("shows its latency in ms or s", () => {
    expect(latencyText(3.25)).toBe("3.3 ms");
    expect(latencyText(42.4)).toBe("42 ms");
    expect(latencyText(1500)).toBe("1.50 s");
  });
  it("says whether it was delivered, and why not", () => {
    expect(attemptNotice("Test event", { ...attempt, type: "dev.jobbie.test" })).toBe("Test event: delivered (200 in 3.3 ms).");
    expect(attemptNotice("Redelivery", { ...attempt, ok: false, status: 500, error: "500 Internal Server Error: boom" })).toBe(
      "Redelivery: not delivered (500: 500 Internal Server Error: boom).",
    );
    expect(attemptNotice("Test event", { ...attempt, ok: false, status: 0, error: "connection refused" })).toBe("Test event: not delivered (no answer: connection refused).");
  });
});
