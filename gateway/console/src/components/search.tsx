// JobSearch: a job search with every filter of POST /api/v1/jobs/search,
// kept in the URL's query (a reload or a shared link keeps it), paged with
// the API's cursors, with bulk actions on the selected rows or on every
// match. Screens fix some fields: the queue detail its queue, the dead
// letter the state.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorField, namespace, post } from "../api";
import {
  cleanFilter,
  emptyForm,
  filterFromForm,
  formFromFilter,
  isEmpty,
  label,
  LIMITS,
  queryFromSearch,
  searchBody,
  searchFromQuery,
  SORTS,
  withFixed,
  withoutFixed,
  type FormValues,
  type Problems,
  type Search,
  type SearchFilter,
} from "../filters";
import { useEvents, type JobEvent } from "../hooks";
import { setQuery, useLocation } from "../router";
import { useSession } from "../session";
import { BulkBar, type BulkSelection } from "./bulk";
import { SearchForm } from "./search-form";
import { ResultsTable, type SearchJob, type SearchPage } from "./search-results";
import { Empty, ErrorBox, Pager } from "./ui";
import { Options } from "./forms";
import { exact, plural } from "../lib/format";
import "./search.css";

export interface JobSearchProps {
  /** filter fields the screen fixes (e.g. {queue: "emails"} or {state: ["dead"]}): they override the URL and cannot be edited */
  fixed?: SearchFilter;
  /** called once, when the first page has loaded (or failed): a screen's data-ready */
  onReady?: () => void;
}

interface Loaded {
  key: string;
  page?: SearchPage;
  error?: Error;
}

export function JobSearch(props: JobSearchProps) {
  const { can } = useSession();
  const manage = can("job.manage");
  const loc = useLocation();
  const fixedKey = JSON.stringify(props.fixed ?? {});
  const fixed = useMemo<SearchFilter>(() => props.fixed ?? {}, [fixedKey]);

  // The URL is the truth for what is searched; the form is what is being typed.
  const queryKey = loc.query.toString();
  const fromUrl = useMemo(() => searchFromQuery(loc.query), [queryKey]);
  const search: Search = fromUrl.search;
  const userFilter = useMemo(() => withoutFixed(search.filter, fixed), [fromUrl, fixed]);
  const filter = useMemo(() => withFixed(userFilter, fixed), [userFilter, fixed]);
  const searchKey = JSON.stringify([searchBody(filter, { ...search, limit: search.limit }), namespace()]);

  // The form follows the URL's filter (a submit, Reset, Back), not its sort or page size: typing is kept then.
  const [form, setForm] = useState<FormValues>(() => formFromFilter(userFilter));
  const [problems, setProblems] = useState<Problems>({});
  const filterKey = JSON.stringify(cleanFilter(userFilter));
  useEffect(() => {
    setForm(formFromFilter(userFilter));
    setProblems({});
  }, [filterKey]);

  // Paging: the cursors of the pages before this one (undefined: the first page). A new search starts over.
  const [paging, setPaging] = useState<{ key: string; stack: (string | undefined)[] }>({ key: searchKey, stack: [undefined] });
  const stack = paging.key === searchKey ? paging.stack : [undefined];
  const cursor = stack[stack.length - 1];

  const [tick, setTick] = useState(0);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loading, setLoading] = useState(true);
  const [stale, setStale] = useState(false);
  const [continuing, setContinuing] = useState(false);
  const quietUntil = useRef(0);
  const readyCalled = useRef(false);

  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  useEffect(() => {
    setSelected(new Set());
    setAllMatching(false);
  }, [searchKey]);

  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    post<SearchPage>("/api/v1/jobs/search", searchBody(filter, { sort: search.sort, order: search.order, cursor, limit: search.limit }), {
      signal: ctl.signal,
    }).then(
      (page) => {
        setLoaded({ key: searchKey, page });
        setLoading(false);
        setStale(false);
      },
      (error: Error) => {
        if (ctl.signal.aborted) return;
        setLoaded({ key: searchKey, error });
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [searchKey, cursor, tick]);

  useEffect(() => {
    if (loaded && !readyCalled.current) {
      readyCalled.current = true;
      props.onReady?.();
    }
  }, [loaded]);

  // Live: say that jobs changed rather than reloading under the user's selection.
  useEvents((e: JobEvent) => {
    if (loading || stale || Date.now() < quietUntil.current) return;
    if (filter.queue && e.queue !== filter.queue) return;
    if (filter.state && !filter.state.includes(e.state) && !(e.from && filter.state.includes(e.from))) return;
    setStale(true);
  });

  const page = loaded?.page;
  const error = loaded?.error;
  const serverField = errorField(error)?.replace(/^filter\./, "") || undefined;

  const go = (s: Search) => {
    const q = queryFromSearch(s, loc.query);
    if (q.toString() === queryKey) setTick((t) => t + 1);
    else setQuery(q);
  };
  const submit = () => {
    const r = filterFromForm(form);
    setProblems(r.problems);
    if (Object.keys(r.problems).length) return;
    go({ ...search, filter: withoutFixed(r.filter, fixed) });
  };
  const reset = () => {
    setForm(emptyForm());
    setProblems({});
    go({ ...search, filter: {} });
  };
  const sortBy = (k: string) => go({ ...search, sort: k, order: search.sort === k && search.order === "desc" ? "asc" : "desc" });
  const reload = () => {
    setStale(false);
    setTick((t) => t + 1);
  };

  // "Continue the scan": the shard's time budget ran out before the page
  // filled; its cursor goes on from there, and what it finds is added.
  const continueScan = async () => {
    if (!page?.cursor) return;
    setContinuing(true);
    try {
      const more = await post<SearchPage>(
        "/api/v1/jobs/search",
        searchBody(filter, { sort: search.sort, order: search.order, cursor: page.cursor, limit: Math.max(1, search.limit - page.jobs.length) }),
      );
      setLoaded((l) =>
        l?.page && l.key === searchKey ? { key: searchKey, page: { ...more, jobs: [...l.page.jobs, ...more.jobs], total: Math.max(l.page.total, more.total) } } : l,
      );
    } catch (e) {
      setLoaded({ key: searchKey, error: e as Error });
    } finally {
      setContinuing(false);
    }
  };

  const selection: BulkSelection | null = allMatching
    ? { filter, total: page?.total ?? 0, exact: page?.total_exact ?? false }
    : selected.size
      ? { ids: [...selected] }
      : null;
  const jobs = page?.jobs ?? [];
  const canMatchAll = !isEmpty(filter) && (page?.total ?? 0) > 0;
  const urlProblems = Object.entries(fromUrl.problems);
  const showQueue = !fixed.queue;

  return (
    <section class="job-search" aria-label="Job search">
      {urlProblems.length > 0 && (
        <ErrorBox id="search-url-problems" error={"Some filters in the address were left out: " + urlProblems.map(([k, v]) => `${label(k)}: ${v}`).join("; ")} />
      )}
      <SearchForm
        form={form}
        onChange={setForm}
        fixed={fixed}
        problems={problems}
        serverField={serverField}
        busy={loading}
        onSubmit={submit}
        onReset={reset}
      />

      <div class="search-results" data-loaded={loaded && !loading ? "true" : "false"} aria-busy={loading}>
        <div class="toolbar search-summary-bar">
          <span id="search-summary" role="status">
            {page && loaded?.key === searchKey ? (
              <>
                {page.total_exact ? "" : "at least "}
                <strong>{exact(page.total)}</strong> {plural(page.total, "result")}{" "}
                <span class="muted">({page.duration_ms < 10 ? page.duration_ms.toFixed(1) : Math.round(page.duration_ms)} ms)</span>
              </>
            ) : loading ? (
              <span class="muted">Searching…</span>
            ) : null}
          </span>
          {loading && page && <span class="muted searching">Searching…</span>}
          <span class="spacer" />
          <label class="inline-field" for="search-sort">
            <span>Sort</span>
            <select id="search-sort" value={search.sort} onChange={(e) => go({ ...search, sort: e.currentTarget.value })}>
              <Options choices={SORTS.map((s) => ({ value: s, label: s.replace("_at", "").replace("_", " ") }))} />
            </select>
          </label>
          <label class="inline-field" for="search-order">
            <span class="sr-only">Order</span>
            <select id="search-order" value={search.order} onChange={(e) => go({ ...search, order: e.currentTarget.value as "asc" | "desc" })}>
              <option value="desc">newest / highest first</option>
              <option value="asc">oldest / lowest first</option>
            </select>
          </label>
          <label class="inline-field" for="search-limit">
            <span>Per page</span>
            <select id="search-limit" value={String(search.limit)} onChange={(e) => go({ ...search, limit: Number(e.currentTarget.value) })}>
              <Options choices={[...new Set([...LIMITS, search.limit])].sort((a, b) => a - b).map(String)} />
            </select>
          </label>
        </div>

        {stale && (
          <div class="notice live-notice" role="status">
            New activity in these jobs since this page loaded.{" "}
            <button type="button" class="link" id="search-refresh" onClick={reload}>
              Refresh
            </button>
          </div>
        )}
        <ErrorBox error={error} />
        {page?.partial && (
          <div class="notice partial-notice" role="status" id="search-partial">
            The search stopped at its time budget before it filled the page: these are the matches found so far.{" "}
            {page.cursor && (
              <button type="button" class="link" id="search-continue" onClick={continueScan} disabled={continuing}>
                {continuing ? "Scanning…" : "Continue the scan"}
              </button>
            )}
          </div>
        )}

        {manage && (
          <div class="select-bar toolbar">
            <button
              type="button"
              id="select-all-matching"
              disabled={!canMatchAll || allMatching}
              title={isEmpty(filter) ? "Set a filter first: a bulk action needs one" : undefined}
              onClick={() => {
                setAllMatching(true);
                setSelected(new Set());
              }}
            >
              Select all {page ? (page.total_exact ? "" : "≥ ") + exact(page.total) : ""} matching
            </button>
            {allMatching && (
              <span class="muted">
                Every job matching the filter is selected, on every page.{" "}
                <button type="button" class="link" onClick={() => setAllMatching(false)}>
                  Select only rows
                </button>
              </span>
            )}
          </div>
        )}
        {manage && (
          <BulkBar
            selection={selection}
            preview={allMatching ? jobs : jobs.filter((j) => selected.has(j.id))}
            onClear={() => {
              setSelected(new Set());
              setAllMatching(false);
            }}
            onFinished={() => {
              quietUntil.current = Date.now() + 2000; // our own action's events are not news
              reload();
            }}
          />
        )}

        {page && jobs.length > 0 && (
          <ResultsTable
            jobs={jobs}
            sort={search.sort}
            order={search.order}
            onSort={sortBy}
            showQueue={showQueue}
            selected={manage ? selected : null}
            allMatching={allMatching}
            onSelect={(ids, on) => {
              const next = new Set(selected);
              for (const id of ids) on ? next.add(id) : next.delete(id);
              setSelected(next);
            }}
          />
        )}
        {page && jobs.length === 0 && !page.partial && <Empty>No jobs match these filters.</Empty>}
        {page && (stack.length > 1 || page.has_more) && (
          <Pager
            page={stack.length}
            hasNext={page.has_more && !!page.cursor}
            label="Result pages"
            onPage={(p) => {
              if (p > stack.length && page.cursor) setPaging({ key: searchKey, stack: [...stack, page.cursor] });
              else if (p < stack.length) setPaging({ key: searchKey, stack: stack.slice(0, -1) });
            }}
          />
        )}
      </div>
    </section>
  );
}

export type { SearchJob, SearchPage };
