// The dashboard's smaller sections: the workers connected, the health of
// the shard cluster that holds the namespace, and the recent failures.
import { Badge, ErrorBox, Empty, KV, Loading, num, Time } from "../components/ui";
import { JobCells } from "../components/links";
import { Table } from "../components/table";
import type { Loaded } from "../hooks";
import { Link } from "../router";
import { attemptOf } from "./job-model";
import { failureTime, sortWorkers, type ClusterHealth, type FailedJob, type Worker } from "./dashboard-lib";

/** DASH_WORKER_ROWS is how many workers the dashboard lists; the workers screen has them all. */
const DASH_WORKER_ROWS = 5;

export function WorkersCard(props: { workers: Loaded<{ workers: Worker[] }> }) {
  const { data, error } = props.workers;
  const all = data ? sortWorkers(data.workers ?? []) : [];
  const active = all.filter((w) => w.status === "active").length;
  const rows = all.slice(0, DASH_WORKER_ROWS);
  return (
    <section class="card" aria-labelledby="dash-workers-h" id="dash-workers">
      <div class="dash-head">
        <h2 id="dash-workers-h">
          Workers <span class="muted dash-sub">({data ? `${num(active)} connected` : "…"})</span>
        </h2>
        <Link href="/workers" class="dash-more">
          {all.length > rows.length ? `All ${num(all.length)} workers →` : "Workers →"}
        </Link>
      </div>
      <ErrorBox error={error} />
      {!data && !error && <Loading />}
      {data && all.length === 0 && <Empty>No worker has fetched in this namespace lately.</Empty>}
      {rows.length > 0 && (
        <Table cols={["Worker", "Host", { label: "Jobs", num: true }, "Last seen", "Status"]}>
          {rows.map((w) => (
            <tr key={w.id} data-worker={w.id}>
              <td class="mono trunc" title={w.id}>
                {w.id}
              </td>
              <td class="trunc" title={w.hostname}>
                {w.hostname || <span class="muted">—</span>}
              </td>
              <td class="num">{num(w.active_jobs)}</td>
              <WorkerSeen w={w} />
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** WorkerSeen are a worker row's last two cells: when it was last seen, and its status. */
export function WorkerSeen({ w }: { w: Worker }) {
  return (
    <>
      <td>
        <Time at={w.last_seen} />
      </td>
      <td>
        <WorkerStatus status={w.status} />
      </td>
    </>
  );
}

/** WorkerStatus is a worker's status as a badge with a glyph (not colour alone). */
function WorkerStatus({ status }: { status: string }) {
  return (
    <Badge class={"wstate-" + status} glyph={status === "active" ? "●" : "○"}>
      {status}
    </Badge>
  );
}

export function ClusterCard(props: { cluster: Loaded<ClusterHealth> }) {
  const { data, error } = props.cluster;
  return (
    <section class="card" aria-labelledby="dash-cluster-h" id="dash-cluster">
      <div class="dash-head">
        <h2 id="dash-cluster-h">Cluster</h2>
        {data && (
          <Badge class={data.healthy ? "dash-healthy" : "dash-unhealthy"} glyph={data.healthy ? "✓" : "!"} id="cluster-health">
            {data.healthy ? "healthy" : "unhealthy"}
          </Badge>
        )}
        <button type="button" class="link dash-more" onClick={props.cluster.reload} aria-label="Refresh the cluster's health">
          Refresh
        </button>
      </div>
      {error && <ErrorBox error={`The cluster's health is not available: ${error.message}`} />}
      {!data && !error && <Loading />}
      {data && (
        <>
          <dl class="kv dash-kv">
            <KV k="Shard" class="mono" id="cluster-shard">
              {data.shard_id}
            </KV>
            <KV k="Leader" class="mono" id="cluster-leader">
              {data.leader_id || <span class="dash-dead">none known</span>}
            </KV>
          </dl>
          <Table cols={["Node", "Role", "Status"]}>
            {(data.nodes ?? []).map((n) => (
              <tr key={n.id} data-node={n.id}>
                <td class="mono">{n.id}</td>
                <td>{n.role}</td>
                <td>
                  <Badge class={n.status === "healthy" ? "dash-healthy" : "dash-unhealthy"} glyph={n.status === "healthy" ? "✓" : "✕"}>
                    {n.status}
                  </Badge>
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}

export function FailuresCard(props: { failures: Loaded<{ jobs: FailedJob[] }> }) {
  const { data, error } = props.failures;
  const jobs = data?.jobs ?? [];
  return (
    <section class="card" aria-labelledby="dash-failures-h" id="dash-failures">
      <div class="dash-head">
        <h2 id="dash-failures-h">Recent failures</h2>
        <Link href="/dead" class="dash-more">
          Dead letter →
        </Link>
      </div>
      <ErrorBox error={error} />
      {!data && !error && <Loading />}
      {data && jobs.length === 0 && <Empty>No job is retrying or dead with an error.</Empty>}
      {jobs.length > 0 && (
        <Table cols={["Job", "Queue", "State", "Last error", { label: "Attempt", num: true }, "When"]}>
          {jobs.map((j) => (
            <tr key={j.id} data-job={j.id}>
              <JobCells job={j.id} queue={j.queue} state={j.state} />
              <td class="trunc dash-error" title={j.last_error}>
                {j.last_error || <span class="muted">—</span>}
              </td>
              <td class="num">{attemptOf(j)}</td>
              <td>
                <Time at={failureTime(j)} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
