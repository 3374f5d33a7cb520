// Small parts the queues list and the queue detail share: the status
// and push badges, the oldest pending age that keeps counting between reloads, and
// the throughput sparkline.
import { useEffect, useMemo, useState } from "preact/hooks";
import { Badge } from "../components/ui";
import { formatAge, statusOf, type Queue } from "./queue-lib";

/** statusGlyph is the glyph of a queue's status: ones every common font has (⏸ and kin are missing from many, and show as a box). */
export const statusGlyph = { active: "▶", paused: "‖", draining: "↓", drained: "■" } as const;
const statusHint = {
  active: "workers get its jobs",
  paused: "workers get no job; enqueue goes on",
  draining: "paused; waiting for its active jobs to finish",
  drained: "paused, and no job is active",
} as const;

/** PushBadge marks a push queue, and one whose push a handler's 410 Gone disabled, with the reason as its title. */
export function PushBadge({ q }: { q: Pick<Queue, "push"> }) {
  const p = q.push;
  if (!p) return null;
  if (p.disabled)
    return (
      <Badge class="queue-push queue-push-disabled" glyph="⚠" title={p.disabled.reason} data-push="disabled">
        push disabled
      </Badge>
    );
  return (
    <Badge class="queue-push" glyph="→" title={"jobs are pushed to " + p.url} data-push="on">
      push
    </Badge>
  );
}

/** QueueStatusBadge shows active / paused / draining / drained with a glyph, not colour alone. */
export function QueueStatusBadge({ q }: { q: Pick<Queue, "paused" | "draining" | "drained"> }) {
  const s = statusOf(q);
  return (
    <Badge class={"queue-status queue-" + s} glyph={statusGlyph[s]} title={statusHint[s]} data-status={s}>
      {s}
    </Badge>
  );
}

// One clock for every age on the page: the age grows while nothing
// happens (no event announces that), so it is counted here rather than
// fetched again.
const clock = { now: Date.now(), timer: 0, listeners: new Set<(n: number) => void>() };

function useClock(on: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    clock.listeners.add(setNow);
    if (clock.listeners.size === 1)
      clock.timer = window.setInterval(() => {
        clock.now = Date.now();
        for (const l of clock.listeners) l(clock.now);
      }, 1000);
    return () => {
      clock.listeners.delete(setNow);
      if (clock.listeners.size === 0) clearInterval(clock.timer);
    };
  }, [on]);
  return now;
}

/** useLoadedAt is when data (a new object per answer) arrived. */
export function useLoadedAt(data: unknown): number {
  return useMemo(() => Date.now(), [data]);
}

/** QueueAge is the oldest pending job's age, counted on from when the queue was read. */
export function QueueAge({ q, loadedAt }: { q: Queue; loadedAt: number }) {
  const waiting = q.counts.pending > 0 && q.oldest_pending_age > 0;
  const now = useClock(waiting);
  if (!waiting) return <span class="muted">—</span>;
  return <span>{formatAge(q.oldest_pending_age + Math.max(0, now - loadedAt) / 1000)}</span>;
}

/** Sparkline draws the last minutes' completions as bars (oldest first); its text says the same for screen readers. */
export function Sparkline({ values }: { values: number[] | null | undefined }) {
  if (!values || values.length === 0) return null;
  const max = Math.max(1, ...values);
  const label = "Completions per minute, oldest first: " + values.join(", ");
  return (
    <span class="sparkline" role="img" aria-label={label} title={label}>
      {values.map((v, i) => (
        <span key={i} class="bar" style={{ height: Math.max(2, Math.round((v / max) * 100)) + "%" }} />
      ))}
    </span>
  );
}
