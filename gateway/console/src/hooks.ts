// Data hooks: one request's state, clocks for what no event announces,
// and the namespace's live event stream shared by every screen that listens.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, namespace } from "./api";
import { openStream, type SSEMessage, type StreamState } from "./sse";

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** reload fetches again, keeping the old data until the new arrives */
  reload: () => void;
}

/** useApi GETs path (null: nothing) and again whenever path, the namespace or deps change. */
export function useApi<T>(path: string | null, deps: unknown[] = []): Loaded<T> {
  return useRequest<T>("GET", path, undefined, deps);
}

/** usePostQuery POSTs body to path (null: nothing) like useApi GETs: for requests that read (the job search); body is compared by its JSON. */
export function usePostQuery<T>(path: string | null, body: unknown, deps: unknown[] = []): Loaded<T> {
  return useRequest<T>("POST", path, body, deps);
}

function useRequest<T>(method: string, path: string | null, body: unknown, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: path !== null });
  const [tick, setTick] = useState(0);
  const ns = namespace();
  const key = body === undefined ? undefined : JSON.stringify(body);
  useEffect(() => {
    if (path === null) {
      setState({ loading: false });
      return;
    }
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api<T>(method, path, key === undefined ? undefined : JSON.parse(key), { signal: ctl.signal }).then(
      (data) => setState({ data, loading: false }),
      (error: Error) => {
        if (!ctl.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => ctl.abort();
  }, [method, path, key, ns, tick, ...deps]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** settled is true once a request has answered, with data or an error: a screen's data-ready. */
export function settled(l: Pick<Loaded<unknown>, "data" | "error">): boolean {
  return l.data !== undefined || l.error !== undefined;
}

/** useTick re-renders every ms milliseconds while the page is visible (for relative times, never to fetch). */
export function useTick(ms: number): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const id = window.setInterval(() => {
      if (document.visibilityState === "visible") setN((x) => x + 1);
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
  return n;
}

/** useInterval calls fn every ms milliseconds while on and the page is visible: for data no event announces (the cluster's health, a job's progress). */
export function useInterval(fn: () => void, ms: number, on = true) {
  useEffect(() => {
    if (!on) return;
    const id = window.setInterval(() => {
      if (document.visibilityState === "visible") fn();
    }, ms);
    return () => clearInterval(id);
  }, [fn, ms, on]);
}

export interface JobEvent {
  type: string;
  job_id: string;
  queue: string;
  state: string;
  from?: string;
  at: string;
  attempt: number;
  worker_id?: string;
  /** the stream's event id */
  seq?: string;
}

type EventListener = (e: JobEvent) => void;
type StateListener = (s: StreamState) => void;

// One stream per namespace, open while anyone listens: screens, and the
// top bar's live indicator, so while signed in the tab keeps one stream
// (switching namespace reopens it; signing out closes it).
const hub = {
  ns: "",
  stream: null as { close: () => void } | null,
  listeners: new Set<EventListener>(),
  stateListeners: new Set<StateListener>(),
  state: "stopped" as StreamState,
};

function setHubState(s: StreamState) {
  hub.state = s;
  for (const l of hub.stateListeners) l(s);
}

function ensureStream() {
  const ns = namespace();
  if (hub.stream && hub.ns === ns) return;
  hub.stream?.close();
  hub.ns = ns;
  hub.stream = openStream("/api/v1/events", {
    onMessage: (m: SSEMessage) => {
      let ev: JobEvent;
      try {
        ev = JSON.parse(m.data);
      } catch {
        return;
      }
      ev.seq = m.id;
      for (const l of hub.listeners) l(ev);
    },
    onState: setHubState,
  });
}

function releaseStream() {
  if (hub.listeners.size === 0 && hub.stateListeners.size === 0) {
    hub.stream?.close();
    hub.stream = null;
    setHubState("stopped");
  }
}

/** useEvents calls fn for each event of the namespace's live stream (fn may change between renders). */
export function useEvents(fn: EventListener) {
  const ref = useRef(fn);
  ref.current = fn;
  const ns = namespace();
  useEffect(() => {
    const l: EventListener = (e) => ref.current(e);
    hub.listeners.add(l);
    ensureStream();
    return () => {
      hub.listeners.delete(l);
      releaseStream();
    };
  }, [ns]);
}

/** useStreamState is the live stream's state, for the header's indicator. */
export function useStreamState(): StreamState {
  const [s, setS] = useState(hub.state);
  useEffect(() => {
    hub.stateListeners.add(setS);
    return () => void hub.stateListeners.delete(setS);
  }, []);
  return s;
}

/** useLiveReload calls reload when events arrive (those passing filter), at most once per interval ms. */
export function useLiveReload(reload: () => void, filter: (e: JobEvent) => boolean = () => true, interval = 1000) {
  const pending = useRef<number | undefined>(undefined);
  const last = useRef(0);
  useEffect(() => () => clearTimeout(pending.current), []);
  useEvents((e) => {
    if (!filter(e) || pending.current !== undefined) return;
    const wait = Math.max(0, last.current + interval - Date.now());
    pending.current = window.setTimeout(() => {
      pending.current = undefined;
      last.current = Date.now();
      reload();
    }, wait);
  });
}
