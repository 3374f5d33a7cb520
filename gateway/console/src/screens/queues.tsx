// The queues list: every queue of the namespace with its counts, rate and
// oldest pending age, sortable by column, filtered by name and paged here
// (the API answers all queues at once; a namespace may have a thousand).
// Filter, sort and page live in the URL so a view can be shared.
import { useMemo } from "preact/hooks";
import { ErrorBox, Empty, Screen, num } from "../components/ui";
import { settled, useApi, useLiveReload } from "../hooks";
import { setQuery, useLocation } from "../router";
import { QueueLink } from "../components/links";
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
        <label class="queues-filter">
          <span class="sr-only">Filter queues by name</span>
          <input
            id="queues-filter"
            type="search"
            placeholder="Filter by name"
            aria-label="Filter queues by name"
            value={lq.q}
            onInput={(e) => set({ q: e.currentTarget.value, page: 1 })}
          />
        </label>
        <span class="muted" id="queues-count" role="status">
          {list.data ? countText(shown.length, all.length) : ""}
        </span>
      </div>
      <ErrorBox error={list.error} />
      {list.data && all.length === 0 && <Empty>No queues yet: a queue appears with its first job or setting.</Empty>}
      {list.data && all.length > 0 && shown.length === 0 && <Empty>No queue name contains “{lq.q}”.</Empty>}
      {shown.length > 0 && (
        <div class="table-wrap">
          <table class="data queues-table" id="queues-table">
            <thead>
              <tr>
                {columns.map((c) => {
                  const sorted = lq.sort === c.key;
                  return (
                    <th
                      key={c.key}
                      scope="col"
                      class={c.num ? "num" : undefined}
                      aria-sort={sorted ? (lq.dir === "asc" ? "ascending" : "descending") : "none"}
                      data-col={c.key}
                    >
                      <button type="button" class="sort" onClick={() => set({ ...nextSort(lq, c.key), page: 1 })}>
                        {c.label}
                        <span aria-hidden="true" class="sort-mark">
                          {sorted ? (lq.dir === "asc" ? " ▲" : " ▼") : ""}
                        </span>
                      </button>
                    </th>
                  );
                })}
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {pg.items.map((q) => (
                <QueueRow key={q.name} q={q} loadedAt={loadedAt} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pg.pages > 1 && (
        <nav class="pager" aria-label="Pages of queues">
          <button type="button" disabled={pg.page <= 1} onClick={() => set({ page: pg.page - 1 })} aria-label="Previous page">
            ◀
          </button>
          <span aria-current="page">
            Page {pg.page} of {pg.pages}
          </span>
          <button type="button" disabled={pg.page >= pg.pages} onClick={() => set({ page: pg.page + 1 })} aria-label="Next page">
            ▶
          </button>
        </nav>
      )}
    </Screen>
  );
}

function countText(shown: number, all: number): string {
  const q = (n: number) => n.toLocaleString("en-US") + (n === 1 ? " queue" : " queues");
  return shown === all ? q(all) : `${shown.toLocaleString("en-US")} of ${q(all)}`;
}

function QueueRow({ q, loadedAt }: { q: Queue; loadedAt: number }) {
  const stopped = q.paused || q.draining;
  return (
    <tr data-queue={q.name}>
      <td class="trunc">
        <QueueLink queue={q.name} title={q.description || undefined} />
      </td>
      <td class="num" data-col="pending">
        {num(q.counts.pending)}
      </td>
      <td class="num" data-col="active">
        {num(q.counts.active)}
      </td>
      <td class="num" data-col="completed">
        {num(q.counts.completed)}
      </td>
      <td class="num" data-col="dead">
        {num(q.counts.dead)}
      </td>
      <td class="num" data-col="rate">
        {stopped && q.throughput === 0 ? <span class="muted">—</span> : formatRate(q.throughput)}
      </td>
      <td class="num" data-col="age">
        <QueueAge q={q} loadedAt={loadedAt} />
      </td>
      <td>
        <QueueStatusBadge q={q} />
      </td>
    </tr>
  );
}
