// A zone with an offset and daylight saving, so local and UTC times differ
// (Node applies a TZ set at run time).
declare const process: { env: Record<string, string | undefined> };
process.env.TZ = "Europe/Berlin";

import { describe, expect, it } from "vitest";
import {
  bulkBody,
  cleanFilter,
  describeFilter,
  emptyForm,
  filterFromForm,
  formFromFilter,
  fromLocalInput,
  isEmpty,
  isoUTC,
  localInput,
  parseTime,
  queryFromSearch,
  searchBody,
  searchFromQuery,
  withFixed,
  withoutFixed,
  type Search,
  type SearchFilter,
} from "./filters";

const full: SearchFilter = {
  queue: "emails.send",
  state: ["dead", "retrying"],
  priority: "high",
  tags: { tenant: "acme", tier: "gold" },
  payload_contains: "user@example.com",
  payload_jq: '.template == "welcome"',
  created_after: "2026-02-10T08:30:00Z",
  created_before: "2026-02-11T00:00:00Z",
  scheduled_after: "2026-02-10T00:00:00Z",
  scheduled_before: "2026-02-12T00:00:00Z",
  started_after: "2026-02-10T01:00:00Z",
  started_before: "2026-02-10T02:00:00Z",
  completed_after: "2026-02-10T03:00:00Z",
  completed_before: "2026-02-10T04:00:00Z",
  expire_after: "2026-03-01T00:00:00Z",
  expire_before: "2026-04-01T00:00:00Z",
  worker_id: "worker-a1",
  has_errors: true,
  error_contains: "SMTP timeout",
  batch_id: "batch_01",
  unique_key: "welcome user@example.com",
  attempt_min: 2,
  attempt_max: 5,
  job_id_prefix: "job_01HX",
  concurrency_key: "customer-42",
  fairness_key: "tenant 7",
};

describe("times", () => {
  it("shows UTC in local time and reads it back", () => {
    expect(process.env.TZ).toBe("Europe/Berlin");
    expect(localInput("2026-02-10T08:30:00Z")).toBe("2026-02-10T09:30"); // CET, +1
    expect(localInput("2026-07-10T08:30:00Z")).toBe("2026-07-10T10:30"); // CEST, +2
    expect(localInput("2026-02-10T08:30:15Z")).toBe("2026-02-10T09:30:15");
    expect(localInput("2026-02-10T08:30:15.250Z")).toBe("2026-02-10T09:30:15.250");
    expect(localInput("2026-02-10")).toBe("2026-02-10T01:00"); // a date is midnight UTC
    expect(localInput("nonsense")).toBe("");
    expect(isoUTC(fromLocalInput("2026-02-10T09:30")!)).toBe("2026-02-10T08:30:00Z");
    expect(isoUTC(fromLocalInput("2026-02-10T09:30:15.5")!)).toBe("2026-02-10T08:30:15.500Z");
  });

  it("refuses dates that are not on the calendar", () => {
    expect(fromLocalInput("2026-02-31T10:00")).toBeNull();
    expect(fromLocalInput("2026-02-10T24:00")).toBeNull();
    expect(fromLocalInput("2026-02-10")).toBeNull();
    expect(parseTime("2026-02-31")).toBeNull();
    expect(parseTime("2026-13-01T00:00:00Z")).toBeNull();
    expect(parseTime("2026-02-10T10:00:00")).toBeNull(); // no zone: ambiguous
    expect(parseTime("2026-02-10T10:00:00+02:00")!.toISOString()).toBe("2026-02-10T08:00:00.000Z");
    expect(parseTime("2028-02-29")).not.toBeNull();
  });
});

describe("URL query", () => {
  it("round-trips every filter, sort, order and limit", () => {
    const s: Search = { filter: full, sort: "priority", order: "asc", limit: 100 };
    const q = queryFromSearch(s);
    expect(q.getAll("state")).toEqual(["dead", "retrying"]);
    expect(q.getAll("tag")).toEqual(["tenant=acme", "tier=gold"]);
    const back = searchFromQuery(new URLSearchParams(q.toString()));
    expect(back.problems).toEqual({});
    expect(back.search).toEqual(s);
  });

  it("leaves defaults and empty values out, and keeps other keys of the page", () => {
    const q = queryFromSearch(
      { filter: { queue: "", state: [], error_contains: "SMTP" } as SearchFilter, sort: "created_at", order: "desc", limit: 50 },
      new URLSearchParams("tab=jobs&state=pending&sort=attempt"),
    );
    expect(q.toString()).toBe("tab=jobs&error_contains=SMTP");
    const empty = searchFromQuery(new URLSearchParams("queue=&state=&tag=&attempt_min=&has_errors="));
    expect(empty.search.filter).toEqual({});
    expect(empty.problems).toEqual({});
  });

  it("refuses bad values with a message and drops them", () => {
    const r = searchFromQuery(
      new URLSearchParams("state=dead&state=zombie&priority=urgent&attempt_min=x&attempt_max=-1&created_after=yesterday&tag=oops&has_errors=maybe&sort=name&order=up&limit=5000&error_contains=SMTP"),
    );
    expect(r.search).toEqual({ filter: { state: ["dead"], error_contains: "SMTP" }, sort: "created_at", order: "desc", limit: 50 });
    expect(Object.keys(r.problems).sort()).toEqual(
      ["attempt_max", "attempt_min", "created_after", "has_errors", "limit", "order", "priority", "sort", "state", "tags"].sort(),
    );
    expect(r.problems.state).toContain("zombie");
    expect(r.problems.attempt_min).toContain("whole number");
  });

  it("accepts comma-separated states and a bare date, and normalises other zones to UTC", () => {
    const r = searchFromQuery(new URLSearchParams("state=dead,retrying&created_after=2026-02-10&created_before=2026-02-10T12:00:00%2B02:00"));
    expect(r.search.filter).toEqual({ state: ["dead", "retrying"], created_after: "2026-02-10", created_before: "2026-02-10T10:00:00Z" });
  });

  it("refuses after later than before and attempts from above to", () => {
    const r = searchFromQuery(new URLSearchParams("created_after=2026-02-11&created_before=2026-02-10&attempt_min=5&attempt_max=2"));
    expect(r.problems.created_after).toContain("later than");
    expect(r.problems.attempt_min).toContain("more than");
  });
});

describe("form", () => {
  it("round-trips every filter through the form, times in local time", () => {
    const form = formFromFilter(full);
    expect(form.created_after).toBe("2026-02-10T09:30");
    expect(form.tags).toBe("tenant=acme, tier=gold");
    expect(form.has_errors).toBe("true");
    expect(form.attempt_min).toBe("2");
    const back = filterFromForm(form);
    expect(back.problems).toEqual({});
    expect(back.filter).toEqual(full);
  });

  it("drops empty fields and trims names, not substrings", () => {
    const form = { ...emptyForm(), queue: "  emails  ", payload_contains: " a b ", error_contains: "   ", worker_id: " w1 ", has_errors: "false", attempt_max: "0" };
    expect(filterFromForm(form)).toEqual({
      filter: { queue: "emails", payload_contains: " a b ", worker_id: "w1", has_errors: false, attempt_max: 0 },
      problems: {},
    });
    expect(filterFromForm(emptyForm())).toEqual({ filter: {}, problems: {} });
  });

  it("refuses bad numbers, tags and times with a message", () => {
    const form = { ...emptyForm(), attempt_min: "2.5", attempt_max: "1e3", tags: "tenant=acme, vip", created_before: "2026-02-31T10:00" };
    const r = filterFromForm(form);
    expect(r.filter).toEqual({ tags: { tenant: "acme" } });
    expect(r.problems.attempt_min).toMatch(/whole number/);
    expect(r.problems.attempt_max).toMatch(/whole number/);
    expect(r.problems.tags).toMatch(/key=value/);
    expect(r.problems.created_before).toMatch(/not a date/);
    expect(filterFromForm({ ...emptyForm(), tags: "a=1\na=2" }).problems.tags).toMatch(/twice/);
    expect(filterFromForm({ ...emptyForm(), attempt_min: String(2 ** 30 + 1) }).problems.attempt_min).toBeDefined();
  });

  it("keeps = inside a tag's value and allows an empty value", () => {
    expect(filterFromForm({ ...emptyForm(), tags: "q=a=b, empty=" }).filter.tags).toEqual({ q: "a=b", empty: "" });
  });
});

describe("fixed fields and bodies", () => {
  it("lets fixed fields win and keeps them out of the URL's part", () => {
    const user: SearchFilter = { queue: "other", state: ["pending"], error_contains: "SMTP" };
    expect(withFixed(user, { state: ["dead"] })).toEqual({ queue: "other", state: ["dead"], error_contains: "SMTP" });
    expect(withoutFixed(user, { queue: "emails" })).toEqual({ state: ["pending"], error_contains: "SMTP" });
    expect(withFixed(user)).toEqual(user);
  });

  it("builds the search body with only what is set", () => {
    expect(searchBody({ state: ["dead"], error_contains: "SMTP", tags: {} }, { sort: "created_at", order: "desc", limit: 50 })).toEqual({
      state: ["dead"],
      error_contains: "SMTP",
      limit: 50,
    });
    expect(searchBody({ queue: "q" }, { sort: "attempt", order: "asc", cursor: "AQ", limit: 25 })).toEqual({
      queue: "q",
      sort: "attempt",
      order: "asc",
      cursor: "AQ",
      limit: 25,
    });
  });

  it("builds bulk bodies by ids and by filter", () => {
    expect(bulkBody("retry", { ids: ["job_1"] })).toEqual({ job_ids: ["job_1"], action: "retry" });
    expect(bulkBody("move", { filter: { queue: "a", state: ["dead"], payload_jq: "" } }, { queue: "b" })).toEqual({
      filter: { queue: "a", state: ["dead"] },
      action: "move",
      move_to_queue: "b",
    });
    expect(bulkBody("change_priority", { ids: ["j"] }, { priority: "critical" })).toEqual({ job_ids: ["j"], action: "change_priority", priority: "critical" });
  });

  it("tells an empty filter", () => {
    expect(isEmpty({})).toBe(true);
    expect(isEmpty(cleanFilter({ queue: "", state: [] }))).toBe(true);
    expect(isEmpty({ has_errors: false })).toBe(false);
  });
});

describe("describeFilter", () => {
  it("says what a filter selects", () => {
    expect(describeFilter({ queue: "emails.send", state: ["dead"], error_contains: "SMTP" })).toBe('dead jobs in emails.send matching error contains "SMTP"');
    expect(describeFilter({})).toBe("jobs in every queue");
    expect(describeFilter({ state: ["dead", "cancelled"], priority: "high", tags: { t: "a" }, attempt_min: 3 })).toBe(
      "dead or cancelled jobs in every queue matching priority high and tag t=a and at least 3 attempts",
    );
    expect(describeFilter({ created_after: "2026-02-10T08:30:00Z", created_before: "2026-02-11T08:30:00Z", has_errors: false })).toBe(
      "jobs in every queue matching without errors and created between 2026-02-10 09:30 and 2026-02-11 09:30",
    );
    expect(describeFilter({ queue: "q", concurrency_key: "customer-42", fairness_key: "t7" })).toBe(
      'jobs in q matching concurrency key "customer-42" and fairness key "t7"',
    );
  });
});
