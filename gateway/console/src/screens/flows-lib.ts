// What the Batches screen and a job's chain panel compute from the API's
// answers (GET /api/v1/batches, GET /api/v1/jobs/{id}/chain), kept apart
// from the components so it is tested on its own.

export interface Batch {
  id: string;
  total: number;
  pending: number;
  succeeded: number;
  failed: number;
  callback_queue: string;
  callback_job_id: string | null;
  callback_state: string | null;
  created_at: string | null;
  completed_at: string | null;
}

export interface BatchList {
  batches: Batch[];
  cursor: string | null;
  has_more: boolean;
}

/** batchesPath is the list's request for one page: limit batches after cursor (undefined: the newest). */
export function batchesPath(limit: number, cursor: string | undefined): string {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set("cursor", cursor);
  return "/api/v1/batches?" + q.toString();
}

/**
 * Pages walks a cursor-paged list: stack holds the cursor of each page
 * shown so far (undefined for the first), so going back needs no cursor
 * of the server's, and going on pushes the last page's.
 */
export type Pages = (string | undefined)[];

export const firstPage: Pages = [undefined];

/** turnPage goes to page p (1-based) from stack, with next the cursor that follows the current page; it stays put when p is not reachable. */
export function turnPage(stack: Pages, p: number, next: string | null): Pages {
  if (p < 1) return stack;
  if (p <= stack.length) return stack.slice(0, p);
  if (p === stack.length + 1 && next) return [...stack, next];
  return stack;
}

/** callbackText says where a batch's callback stands. */
export function callbackText(b: Batch): string {
  if (!b.callback_job_id) return b.pending > 0 ? "waiting for " + b.pending + " job" + (b.pending === 1 ? "" : "s") : "enqueuing";
  return b.callback_state ?? "gone (pruned or deleted)";
}

export interface ChainStep {
  step: number;
  queue: string;
  job_id: string | null;
  job_queue: string | null;
  state: string | null;
  created_at: string | null;
  completed_at: string | null;
}

export interface Chain {
  chain_id: string;
  step: number;
  steps: ChainStep[];
  on_failure_queue: string | null;
  on_exit_queue: string | null;
}

/** neighbours are the jobs of the steps before and after the asked job's, when they have one. */
export function neighbours(c: Chain): { prev: ChainStep | null; next: ChainStep | null } {
  const at = (i: number) => (c.steps[i]?.job_id ? c.steps[i] : null);
  return { prev: at(c.step - 1), next: at(c.step + 1) };
}

/** chainStatus sums a chain up: done when its last step completed, failed when a step died or was cancelled, else the step it stands at. */
export function chainStatus(c: Chain): string {
  const n = c.steps.length;
  const stopped = c.steps.find((s) => s.state === "dead" || s.state === "cancelled");
  if (stopped) return `stopped at step ${stopped.step + 1} of ${n} (${stopped.state})`;
  if (n > 0 && c.steps[n - 1].state === "completed") return `finished: all ${n} steps completed`;
  let last = -1;
  c.steps.forEach((s, i) => {
    if (s.job_id) last = i;
  });
  if (last < 0) return `${n} steps; none found`;
  const s = c.steps[last];
  if (s.state === "completed") return `no job after step ${last + 1} of ${n} (stopped early, or pruned)`;
  return `at step ${last + 1} of ${n} (${s.state})`;
}
