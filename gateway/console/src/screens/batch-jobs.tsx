// A batch's jobs: POST /api/v1/jobs/search by batch_id (an indexed
// filter), 50 a page, with the search's cursors kept for going back.
import { useEffect, useState } from "preact/hooks";
import { usePostQuery } from "../hooks";
import { Empty, ErrorBox, Loading, Pager, StateBadge, Time } from "../components/ui";
import type { SearchPage } from "../components/search-results";
import { JobLink, QueueLink } from "../components/links";
import { Table } from "../components/table";
import { exact, plural } from "../lib/format";
import { attemptOf } from "./job-model";

const PAGE_SIZE = 50;

/** BatchJobs lists a batch's jobs in one state ("": all); the parent keys it by id and state, so a new filter starts at page 1. */
export function BatchJobs(props: { id: string; state: string; onState: (s: string) => void; tick: number }) {
  // cursors[i] opens page i + 1 ("" for the first).
  const [cursors, setCursors] = useState<string[]>([""]);
  const [page, setPage] = useState(1);
  const body: Record<string, unknown> = { batch_id: props.id, limit: PAGE_SIZE, order: "asc" };
  if (props.state) body.state = [props.state];
  if (cursors[page - 1]) body.cursor = cursors[page - 1];
  const { data, error } = usePostQuery<SearchPage>("/api/v1/jobs/search", body, [props.tick]);
  // An answer is always this page's: a request for another page aborts it.
  useEffect(() => {
    const next = data?.cursor;
    if (next) setCursors((c) => (c[page] === next ? c : [...c.slice(0, page), next]));
  }, [data]);

  return (
    <section class="card" aria-labelledby="batch-jobs-h">
      <div class="toolbar">
        <h2 id="batch-jobs-h" class="batch-h">
          Jobs
        </h2>
        {props.state && (
          <button type="button" id="batch-state-clear" onClick={() => props.onState("")}>
            Only {props.state} ✕
          </button>
        )}
        {data && (
          <span class="muted">
            {exact(data.total)}
            {data.total_exact ? "" : "+"} {plural(data.total, "job")}
          </span>
        )}
      </div>
      <ErrorBox error={error} />
      {!data ? (
        error ? null : <Loading />
      ) : data.jobs.length === 0 ? (
        <Empty>No jobs{props.state ? " in state " + props.state : ""}.</Empty>
      ) : (
        <Table id="batch-jobs" cols={["Job", "Queue", "State", { label: "Attempt", num: true }, "Created", "Last error"]}>
          {data.jobs.map((j) => (
            <tr key={j.id}>
              <td>
                <JobLink job={j.id} class="mono" />
              </td>
              <td>
                <QueueLink queue={j.queue} />
              </td>
              <td>
                <StateBadge state={j.state} />
              </td>
              <td class="num">{attemptOf(j)}</td>
              <td>
                <Time at={j.created_at} />
              </td>
              <td class="trunc" title={j.last_error}>
                {j.last_error ?? <span class="muted">—</span>}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {data && (page > 1 || data.has_more) && <Pager page={page} hasNext={data.has_more && !!data.cursor} onPage={setPage} label="Pages of the batch's jobs" />}
    </section>
  );
}
