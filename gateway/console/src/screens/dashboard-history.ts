// The dashboard's hour of completions per queue, for the first few queues
// it lists: one stats request per queue, each answer kept a minute, so a
// filter being typed or a reload does not ask again, and read anew each
// minute only while the page is visible.
import { useCallback, useEffect, useState } from "preact/hooks";
import { get, namespace } from "../api";
import { useInterval } from "../hooks";
import { sparkPath, toHistory, type StatsAnswer } from "./history-lib";

/** SPARK_QUEUES is how many of the listed queues get their hour's sparkline: at most that many requests a minute. */
export const SPARK_QUEUES = 5;
const FRESH = 60_000;

type Got = { at: number; v: number[] | Error };

/** useHourSparks answers, per queue name, its completions per minute over the last hour (oldest first) or the error reading them. */
export function useHourSparks(names: string[]): Record<string, number[] | Error> {
  const [got, setGot] = useState<Record<string, Got>>({});
  const [tick, setTick] = useState(0);
  const ns = namespace();
  const key = names.join("\n");
  useEffect(() => {
    const now = Date.now();
    // A second's slack: the minute's timer may fire a hair before a minute since the last answer's request.
    const stale = names.filter((n) => !(got[ns + "\n" + n] && now - got[ns + "\n" + n].at < FRESH - 1000));
    if (stale.length === 0) return;
    const ctl = new AbortController();
    for (const n of stale) {
      const put = (v: number[] | Error) => setGot((g) => ({ ...g, [ns + "\n" + n]: { at: now, v } }));
      get<StatsAnswer>(sparkPath(n, now), { signal: ctl.signal }).then(
        (a) => put(toHistory(a).values.completed),
        (e: Error) => {
          if (!ctl.signal.aborted) put(e);
        },
      );
    }
    return () => ctl.abort();
  }, [key, ns, tick]);
  const again = useCallback(() => setTick((t) => t + 1), []);
  useInterval(again, FRESH);
  const out: Record<string, number[] | Error> = {};
  for (const n of names) {
    const g = got[ns + "\n" + n];
    if (g) out[n] = g.v;
  }
  return out;
}
