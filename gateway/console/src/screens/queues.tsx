// The queues list: every queue of the namespace with its counts, rate and
// oldest pending age, sortable by column, filtered by name and paged here
// (the API answers all queues at once; a namespace may have a thousand).
// Filter, sort and page live in the URL so a view can be shared.
import { useMemo } from "preact/hooks";
import { ErrorBox, Empty, Pager, Screen, num } from "../components/ui";
import { settled, useApi, useLiveReload } from "../hooks";
import { setQuery, useLocation } from "../router";
import { QueueLink } from "../components/links";
import { FilterBox } from "../components/forms";
import { NumCell, SortHeader, Table } from "../components/table";
import { counted, exact } from "../lib/format";
import {
  filterQueues,
  formatRate,
  nextSort,
  paginate,
  readListQuery,
  sortQueues,
  writeListQuery,
  type ListQuery,
  type Queue,
  type QueueList,
  type SortKey,
} from "./queue-lib";
import { QueueAge, QueueStatusBadge, useLoadedAt } from "./queue-parts";
import "./queues.css";

const columns: { key: SortKey; label: string; num?: boolean }[] = [
  { key: "name", label: "Queue" },
  { key: "pending", label: "Pending", num: true },
  { key: "active", label: "Active", num: true },
  { key: "completed", label: "Completed", num: true },
  { key: "dead", label: "Dead", num: true },
  { key: "rate", label: "Rate", num: true },
  { key: "age", label: "Oldest pending", num: true },
];

export function Queues() {
  const loc = useLocation();
  const list = useApi<QueueList>("/api/v1/queues");
  // Any job event may change a count; useLiveReload folds bursts into one reload a second.
  useLiveReload(list.reload);
  const loadedAt = useLoadedAt(list.data);
  const lq = readListQuery(loc.query);
  const set = (change: Partial<ListQuery>) => setQuery(writeListQuery({ ...lq, ...change }));

  const all = list.data?.queues ?? [];
  const shown = useMemo(() => sortQueues(filterQueues(all, lq.q), lq.sort, lq.dir), [list.data, lq.q, lq.sort, lq.dir]);
  const pg = paginate(shown, lq.page);

  return (
    <Screen name="queues" title="Queues" ready={settled(list)}>
      <div class="toolbar">
        <FilterBox id="queues-filter" label="Filter queues by name" class="queues-filter" placeholder="Filter by name" value={lq.q} onInput={(q) => set({ q, page: 1 })} />
        <span class="muted" id="queues-count" role="status">
          {list.data ? countText(shown.length, all.length) : ""}
        </span>
      </div>
      <ErrorBox error={list.error} />
      {list.data && all.length === 0 && <Empty>No queues yet: a queue appears with its first job or setting.</Empty>}
      {list.data && all.length > 0 && shown.length === 0 && <Empty>No queue name contains “{lq.q}”.</Empty>}
      {shown.length > 0 && (
        <Table
          id="queues-table"
          class="queues-table"
          cols={[
            ...columns.map((c) => (
              <SortHeader
                key={c.key}
                label={c.label}
                num={c.num}
                col={c.key}
                sorted={lq.sort === c.key ? lq.dir : null}
                onSort={() => set({ ...nextSort(lq, c.key), page: 1 })}
              />
            )),
            "Status",
          ]}
        >
          {pg.items.map((q) => (
            <QueueRow key={q.name} q={q} loadedAt={loadedAt} />
          ))}
        </Table>
      )}
      {pg.pages > 1 && <Pager page={pg.page} pages={pg.pages} hasNext={pg.page < pg.pages} onPage={(page) => set({ page })} label="Pages of queues" />}
    </Screen>
  );
}

function countText(shown: number, all: number): string {
  return shown === all ? counted(all, "queue") : `${exact(shown)} of ${counted(all, "queue")}`;
}

function QueueRow({ q, loadedAt }: { q: Queue; loadedAt: number }) {
  const stopped = q.paused || q.draining;
  return (
    <tr data-queue={q.name}>
      <td class="trunc">
        <QueueLink queue={q.name} title={q.description || undefined} />
      </td>
      <NumCell col="pending">{num(q.counts.pending)}</NumCell>
      <NumCell col="active">{num(q.counts.active)}</NumCell>
      <NumCell col="completed">{num(q.counts.completed)}</NumCell>
      <NumCell col="dead">{num(q.counts.dead)}</NumCell>
      <NumCell col="rate">{stopped && q.throughput === 0 ? <span class="muted">—</span> : formatRate(q.throughput)}</NumCell>
      <NumCell col="age">
        <QueueAge q={q} loadedAt={loadedAt} />
      </NumCell>
      <td>
        <QueueStatusBadge q={q} />
      </td>
    </tr>
  );
}
