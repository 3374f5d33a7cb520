// The dashboard: the namespace at a glance. Totals and every queue's
// counts, the workers connected, the shard cluster's health and the recent
// failures; counts follow the live event stream (at most one reload a
// second), the cluster's health, which no event announces, every 15 s.
import { ErrorBox, Loading, Screen } from "../components/ui";
import { settled, useApi, useInterval, useLiveReload, usePostQuery, useTick } from "../hooks";
import { useSession } from "../session";
import { ClusterCard, FailuresCard, WorkersCard } from "./dashboard-cards";
import { FiringCard } from "./alerts";
import { isFailure, RECENT_FAILURES, type ClusterHealth, type FailedJob, type Queue, type Worker } from "./dashboard-lib";
import { QueueTable, QueueTotals } from "./dashboard-queues";
import "./dashboard.css";

export function Dashboard() {
  const { can } = useSession();
  const canQueues = can("queue.read");
  const canJobs = can("job.read");
  const canAlerts = can("namespace.read");
  const queues = useApi<{ queues: Queue[] }>(canQueues ? "/api/v1/queues" : null);
  const workers = useApi<{ workers: Worker[] }>(canQueues ? "/api/v1/workers" : null);
  const cluster = useApi<ClusterHealth>(canQueues ? "/api/v1/cluster" : null);
  const failures = usePostQuery<{ jobs: FailedJob[] }>(canJobs ? "/api/v1/jobs/search" : null, RECENT_FAILURES);
  useTick(10_000); // keeps "last seen" and "when" current

  useLiveReload(() => {
    if (!canQueues) return;
    queues.reload();
    workers.reload();
  });
  useLiveReload(failures.reload, (e) => canJobs && isFailure(e));
  useInterval(cluster.reload, 15_000);

  const ready = !canQueues || settled(queues);
  const active = workers.data ? workers.data.workers.filter((w) => w.status === "active").length : undefined;
  return (
    <Screen name="dashboard" title="Dashboard" ready={ready}>
      {!canQueues && !canJobs && <p class="muted">This key's role may not read the namespace's queues or jobs.</p>}
      {canQueues && (
        <>
          <ErrorBox error={queues.error} />
          {queues.data ? (
            <>
              <QueueTotals queues={queues.data.queues ?? []} workers={active} />
              <QueueTable queues={queues.data.queues ?? []} />
            </>
          ) : (
            !queues.error && <Loading />
          )}
          <div class="grid dash-grid">
            <WorkersCard workers={workers} />
            <ClusterCard cluster={cluster} />
          </div>
        </>
      )}
      {canAlerts && <FiringCard />}
      {canJobs && <FailuresCard failures={failures} />}
    </Screen>
  );
}
