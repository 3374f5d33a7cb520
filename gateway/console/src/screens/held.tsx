// Held jobs: the namespace's jobs in state held (POST /api/v1/jobs/search),
// oldest first, with why each waits (a budget, named, or its
// dependencies), and for a job a budget holds Approve (it runs, outside
// the budget) and Reject (it is cancelled), each after a confirmation;
// the list is read again after an action and when events name a held job.
// The search's rows do not say what holds a job, so each row's job is read
// (GET /api/v1/jobs/{id}), as `jobbie held list` does.
import { useEffect, useState } from "preact/hooks";
import { enc, get, isNotFound, post } from "../api";
import { JobLink, QueueLink } from "../components/links";
import { Table, RowButton } from "../components/table";
import { ConfirmOn, Empty, ErrorBox, Loading, Notice, Pager, Screen, Time } from "../components/ui";
import { usePostQuery, useLiveReload } from "../hooks";
import { counted } from "../lib/format";
import { mapLimit } from "../lib/limit";
import { Link } from "../router";
import { useSession } from "../session";
import { preview, type SearchPage } from "../components/search-results";
import { heldReason, heldSearch, type HeldJob } from "./held-lib";
import "./costs.css";

type Decision = { job: HeldJob; approve: boolean };

/** DETAIL_REQUESTS bounds the job reads in flight. */
const DETAIL_REQUESTS = 5;

export function HeldJobs() {
  const { can } = useSession();
  const manage = can("job.manage");
  // The cursors of the pages before this one (undefined: the first).
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  const cursor = stack[stack.length - 1];
  const res = usePostQuery<SearchPage>("/api/v1/jobs/search", heldSearch(cursor));
  useLiveReload(res.reload, (e) => e.state === "held" || e.from === "held", 1000);
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const [notice, setNotice] = useState("");
  const [details, detailsError] = useDetails(res.data?.jobs);
  const jobs = (res.data?.jobs ?? []).map((j) => details.get(j.id) ?? j) as HeldJob[];

  return (
    <Screen name="held" title="Held jobs" ready={res.data !== undefined || res.error !== undefined}>
      <p class="muted">
        Jobs waiting in state held: for a <Link href="/costs">budget</Link> that was reached when they were enqueued or about to start, or for the jobs
        they depend on. Approving a job a budget holds runs it whatever the budgets say; rejecting it cancels it.
      </p>
      {!manage && (
        <p class="muted" id="held-readonly">
          This key’s role may not approve or reject jobs (job.manage).
        </p>
      )}
      <ErrorBox error={res.error ?? detailsError} id="held-error" />
      <Notice id="held-notice">{notice}</Notice>
      {!res.data ? (
        !res.error && <Loading />
      ) : jobs.length === 0 && stack.length === 1 ? (
        <Empty>No held jobs in this namespace.</Empty>
      ) : (
        <>
          <p class="muted" id="held-count">
            {res.data.total_exact ? counted(res.data.total, "held job") : `at least ${counted(res.data.total, "held job")}`}
          </p>
          <Table id="held" caption="Held jobs" cols={["Job", "Queue", "Held for", "Created", "Payload", manage && { label: "Actions", hidden: true }]}>
            {jobs.map((j) => (
              <tr key={j.id} data-job={j.id} data-reason={j.held_reason ?? ""}>
                <td class="mono">
                  <JobLink job={j.id} />
                </td>
                <td class="queue-cell">
                  <QueueLink queue={j.queue} />
                </td>
                <td class="held-reason">{details.has(j.id) ? heldReason(j) : <span class="muted">…</span>}</td>
                <td>
                  <Time at={j.created_at} />
                </td>
                <td class="mono muted">{preview(j.payload, 40)}</td>
                {manage && (
                  <td>
                    {j.held_reason === "budget" && (
                      <>
                        <RowButton name={`Approve job ${j.id}`} class="primary" data={{ "data-approve": j.id }} onClick={() => setDeciding({ job: j, approve: true })}>
                          Approve
                        </RowButton>{" "}
                        <RowButton name={`Reject job ${j.id}`} danger data={{ "data-reject": j.id }} onClick={() => setDeciding({ job: j, approve: false })}>
                          Reject
                        </RowButton>
                      </>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </Table>
          <Pager
            page={stack.length}
            hasNext={!!res.data.cursor}
            onPage={(p) => (p > stack.length ? setStack([...stack, res.data!.cursor ?? undefined]) : setStack(stack.slice(0, p)))}
            label="Held jobs pages"
          />
        </>
      )}
      <ConfirmOn
        item={deciding}
        id="held-confirm"
        title={deciding?.approve ? "Approve job" : "Reject job"}
        confirmLabel={deciding?.approve ? "Approve job" : "Reject job"}
        danger={!deciding?.approve}
        onClose={() => setDeciding(null)}
        onConfirm={async (d) => {
          const r = await post<{ job_id: string; status: string }>(`/api/v1/jobs/${enc(d.job.id)}/${d.approve ? "approve" : "reject"}`);
          setNotice(`Job ${d.job.id} ${d.approve ? "approved" : "rejected"}: ${r.status}.`);
          res.reload();
        }}
      >
        {deciding?.approve ? (
          <p>
            Run job <span class="mono">{deciding.job.id}</span> now, outside budget {deciding.job.held_budget}? Its retries run whatever the budgets say, too.
          </p>
        ) : (
          <p>
            Cancel job <span class="mono">{deciding?.job.id}</span>? It will not run; a cancelled job can be retried by hand later.
          </p>
        )}
      </ConfirmOn>
    </Screen>
  );
}

/** useDetails reads each listed job's detail, for what holds it; a job gone meanwhile is left as the search listed it. */
function useDetails(jobs: { id: string }[] | undefined): [Map<string, HeldJob>, Error | null] {
  const [m, setM] = useState<Map<string, HeldJob>>(new Map());
  const [err, setErr] = useState<Error | null>(null);
  const key = (jobs ?? []).map((j) => j.id).join(",");
  useEffect(() => {
    const ctl = new AbortController();
    const ids = key ? key.split(",") : [];
    mapLimit(ids, DETAIL_REQUESTS, (id) =>
      get<HeldJob>(`/api/v1/jobs/${enc(id)}`, { signal: ctl.signal }).catch((e) => {
        if (isNotFound(e)) return null;
        throw e;
      }),
    ).then(
      (ds) => {
        setM(new Map(ds.filter((d): d is HeldJob => d !== null).map((d) => [d.id, d])));
        setErr(null);
      },
      (e: Error) => {
        if (!ctl.signal.aborted) setErr(e); // the rows stay as the search listed them; a reload tries again
      },
    );
    return () => ctl.abort();
  }, [key, jobs]);
  return [m, err];
}
