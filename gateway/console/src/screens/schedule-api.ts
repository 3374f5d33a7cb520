// Requests whose JSON text the Schedules screen must keep as written: a
// schedule's payload may hold integers a JS number cannot carry, so the
// dialog sends the payload as typed and reads it back before parsing.
import { apiText } from "../api";
import { rawMember, type Schedule } from "./schedule-logic";

const raw = (method: string, path: string, body?: string) => apiText(method, path, body);

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
