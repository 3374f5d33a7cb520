// The held jobs view's request and words: the search of state held,
// oldest first, and why a held job waits.
import type { SearchJob } from "../components/search-results";

/** HeldJob is a held job as the search lists it, with what holds it (wire.JobDetail's held_reason and held_budget). */
export type HeldJob = SearchJob & { held_reason?: string; held_budget?: string; depends_on?: string[] };

/** HELD_PAGE is a page's size: each row's job is read too. */
export const HELD_PAGE = 25;

/** heldSearch is the search body of one page of held jobs, oldest first. */
export function heldSearch(cursor?: string): Record<string, unknown> {
  const b: Record<string, unknown> = { state: ["held"], sort: "created_at", order: "asc", limit: HELD_PAGE };
  if (cursor) b.cursor = cursor;
  return b;
}

/** heldReason says why a held job waits: its budget, else its dependencies. */
export function heldReason(j: Pick<HeldJob, "held_reason" | "held_budget" | "depends_on">): string {
  if (j.held_reason === "budget") return j.held_budget ? `budget ${j.held_budget}` : "a budget";
  if (j.held_reason) return j.held_reason;
  const n = j.depends_on?.length ?? 0;
  return n === 1 ? "1 job it depends on" : n > 1 ? `${n} jobs it depends on` : "the jobs it depends on";
}
