// Placeholder until the search panel lands: JobSearch shows the jobs of a
// fixed filter (a queue, the dead letter) with every search filter.
export interface JobSearchProps {
  /** filter fields the screen fixes (e.g. {queue: "emails"} or {state: ["dead"]}) */
  fixed?: Record<string, unknown>;
}
export function JobSearch(_props: JobSearchProps) {
  return null;
}
