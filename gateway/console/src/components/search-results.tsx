// The search's results table: a checkbox column for bulk actions, the job
// columns, and sorting by clicking a header (the sort keys the API has).
import { JobCells } from "./links";
import { SortHeader, Table } from "./table";
import { attemptOf, type Job } from "../screens/job-model";
import { Time } from "./ui";

/** SearchJob is a job as POST /api/v1/jobs/search lists it (wire.SearchJob): part of its detail. */
export type SearchJob = Pick<
  Job,
  "id" | "queue" | "payload" | "state" | "priority" | "attempt" | "max_retries" | "created_at" | "updated_at" | "scheduled_at" | "started_at" | "completed_at" | "last_error"
> & { dead_reason?: string | null };

/** SearchPage is one page of a search (wire.SearchPage). */
export interface SearchPage {
  jobs: SearchJob[];
  total: number;
  total_exact: boolean;
  cursor: string | null;
  has_more: boolean;
  duration_ms: number;
  partial: boolean;
}

/** preview shortens a payload's JSON to one line of at most max characters. */
export function preview(v: unknown, max = 60): string {
  let s: string;
  try {
    s = v === undefined ? "" : JSON.stringify(v) ?? "";
  } catch {
    s = String(v);
  }
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

// Columns for the time sort keys that are not shown otherwise.
const timeColumns: Record<string, { label: string; key: keyof SearchJob }> = {
  updated_at: { label: "Updated", key: "updated_at" },
  scheduled_at: { label: "Scheduled", key: "scheduled_at" },
  started_at: { label: "Started", key: "started_at" },
  completed_at: { label: "Completed", key: "completed_at" },
};

export function ResultsTable(props: {
  jobs: SearchJob[];
  sort: string;
  order: "asc" | "desc";
  onSort: (sort: string) => void;
  showQueue: boolean;
  /** null: no checkboxes (the role may not act on jobs) */
  selected: Set<string> | null;
  allMatching: boolean;
  onSelect: (ids: string[], on: boolean) => void;
}) {
  const { jobs, selected } = props;
  const extra = timeColumns[props.sort];
  const pageAll = jobs.length > 0 && selected !== null && jobs.every((j) => selected.has(j.id));
  const sortable = (k: string, label: string, num?: boolean) => (
    <SortHeader
      key={k}
      label={label}
      num={num}
      id={"sort-" + k}
      title={"Sort by " + label.toLowerCase()}
      unsorted=" ↕"
      sorted={props.sort === k ? props.order : null}
      onSort={() => props.onSort(k)}
    />
  );
  return (
    <Table
      class="search-table"
      cols={[
        selected !== null && (
          <th scope="col" class="check-col">
            <input
              type="checkbox"
              id="select-page"
              aria-label="Select every job on this page"
              checked={pageAll || props.allMatching}
              disabled={props.allMatching || jobs.length === 0}
              onChange={(e) => props.onSelect(jobs.map((j) => j.id), e.currentTarget.checked)}
            />
          </th>
        ),
        "Job ID",
        props.showQueue && "Queue",
        "State",
        sortable("attempt", "Attempt", true),
        sortable("priority", "Priority"),
        "Payload",
        "Last error",
        extra && sortable(props.sort, extra.label),
        sortable("created_at", "Created"),
      ]}
    >
      {jobs.map((j) => (
        <tr key={j.id} class={selected?.has(j.id) || props.allMatching ? "selected" : undefined}>
          {selected !== null && (
            <td class="check-col">
              <input
                type="checkbox"
                class="row-check"
                aria-label={"Select " + j.id}
                checked={props.allMatching || selected.has(j.id)}
                disabled={props.allMatching}
                onChange={(e) => props.onSelect([j.id], e.currentTarget.checked)}
              />
            </td>
          )}
          <JobCells job={j.id} queue={props.showQueue && j.queue} state={j.state} />
          <td class="num">{attemptOf(j)}</td>
          <td>{j.priority}</td>
          <td class="trunc mono" title={preview(j.payload, 2000)}>
            {preview(j.payload)}
          </td>
          <td class="trunc last-error" title={j.last_error ?? j.dead_reason ?? undefined}>
            {j.last_error ?? (j.dead_reason ? <span class="muted">{j.dead_reason}</span> : <span class="muted">—</span>)}
          </td>
          {extra && (
            <td>
              <Time at={j[extra.key] as string | null} />
            </td>
          )}
          <td>
            <Time at={j.created_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}
