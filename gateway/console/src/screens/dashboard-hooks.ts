// Hooks the dashboard, workers and live events screens share beyond the
// frame's: a POST that reads (the job search) kept like useApi's GET, and
// a clock tick so relative times ("12s ago") do not go stale.
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, namespace } from "../api";
import type { Loaded } from "../hooks";

/** usePostQuery POSTs body to path (null: nothing) like useApi GETs: again on reload, keeping the old data until the new arrives. */
export function usePostQuery<T>(path: string | null, body: unknown): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: path !== null });
  const [tick, setTick] = useState(0);
  const ns = namespace();
  const key = JSON.stringify(body);
  useEffect(() => {
    if (path === null) {
      setState({ loading: false });
      return;
    }
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api<T>("POST", path, JSON.parse(key), { signal: ctl.signal }).then(
      (data) => setState({ data, loading: false }),
      (error: Error) => {
        if (!ctl.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => ctl.abort();
  }, [path, key, ns, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
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

/** useInterval calls fn every ms milliseconds while the page is visible: for data no event announces (the cluster's health). */
export function useInterval(fn: () => void, ms: number) {
  useEffect(() => {
    const id = window.setInterval(() => {
      if (document.visibilityState === "visible") fn();
    }, ms);
    return () => clearInterval(id);
  }, [fn, ms]);
}
