// Requests whose JSON text the Schedules screen must keep as written: a
// schedule's payload may hold integers a JS number cannot carry, so the
// dialog sends the payload as typed and reads it back before parsing.
// api.ts only sends bodies it serialises itself, so these use its headers
// and error reading around their own fetch.
import { ApiError, errorOf, get, headers } from "../api";
import { rawMember, type Schedule } from "./schedule-logic";

async function raw(method: string, path: string, body?: string): Promise<string> {
  const h = headers(method);
  if (body !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers: h, body, credentials: "same-origin" });
  if (!res.ok) {
    const err: ApiError = await errorOf(res);
    // The session ended: one request through api.ts tells the shell so.
    if (res.status === 401) get("/api/v1/schedules").catch(() => {});
    throw err;
  }
  return res.text();
}

/** saveSchedule creates (id undefined) or replaces schedule id with body, a wire.ScheduleRequest's JSON text. */
export async function saveSchedule(id: string | undefined, body: string): Promise<Schedule> {
  const text = id === undefined ? await raw("POST", "/api/v1/schedules", body) : await raw("PUT", "/api/v1/schedules/" + encodeURIComponent(id), body);
  return JSON.parse(text) as Schedule;
}

/** loadSchedule reads schedule id and its payload's JSON text as sent. */
export async function loadSchedule(id: string): Promise<{ schedule: Schedule; rawPayload?: string }> {
  const text = await raw("GET", "/api/v1/schedules/" + encodeURIComponent(id));
  const schedule = JSON.parse(text) as Schedule;
  let rawPayload: string | undefined;
  try {
    rawPayload = rawMember(text, "payload");
  } catch {
    rawPayload = undefined;
  }
  return { schedule, rawPayload };
}
