// The queue detail's history charts: throughput, depth, oldest pending
// age and processing time percentiles over a chosen range, drawn as plain
// SVG lines with labelled axes. Minute ranges are read again every minute
// while the page is visible; the API's errors show in place of the charts.
import { useCallback, useState } from "preact/hooks";
import { ErrorBox, Empty, Loading } from "../components/ui";
import { useApi, useInterval } from "../hooks";
import {
  formatCount,
  formatMs,
  formatSeconds,
  isEmpty,
  niceScale,
  plot,
  RANGES,
  statsPath,
  timeLabel,
  toHistory,
  type History,
  type SeriesName,
  type StatsAnswer,
} from "./history-lib";
import "./queue-history.css";

interface Line {
  name: SeriesName;
  label: string;
}

interface ChartSpec {
  id: string;
  title: string;
  unit: string;
  format: (n: number) => string;
  integer: boolean;
  lines: Line[];
}

const CHARTS: ChartSpec[] = [
  {
    id: "throughput",
    title: "Throughput",
    unit: "jobs per step",
    format: formatCount,
    integer: true,
    lines: [
      { name: "enqueued", label: "enqueued" },
      { name: "completed", label: "completed" },
      { name: "failed", label: "failed" },
      { name: "dead", label: "dead" },
    ],
  },
  { id: "depth", title: "Depth", unit: "pending jobs", format: formatCount, integer: true, lines: [{ name: "pending", label: "pending" }] },
  { id: "age", title: "Oldest pending", unit: "age", format: formatSeconds, integer: false, lines: [{ name: "oldest", label: "oldest pending age" }] },
  {
    id: "processing",
    title: "Processing time",
    unit: "fetch to ack or fail",
    format: formatMs,
    integer: false,
    lines: [
      { name: "p50", label: "p50" },
      { name: "p95", label: "p95" },
      { name: "p99", label: "p99" },
    ],
  },
];

export function QueueHistory({ name }: { name: string }) {
  const [rangeId, setRangeId] = useState("1h");
  const range = RANGES.find((r) => r.id === rangeId) ?? RANGES[0];
  // The request ends at the time of the last (re)load: a new "now" each minute.
  const [now, setNow] = useState(() => Date.now());
  const res = useApi<StatsAnswer>(statsPath(name, range, now));
  const tick = useCallback(() => setNow(Date.now()), []);
  useInterval(tick, range.step === "1m" ? 60_000 : 3_600_000);
  const h = res.data && res.data.queue === name && res.data.step === range.step ? toHistory(res.data) : null;
  return (
    <section class="card queue-history" id="queue-history" aria-labelledby="queue-history-h" data-range={range.id} data-loaded={res.loading ? undefined : "true"}>
      <div class="card-head">
        <h2 id="queue-history-h">History</h2>
        <div class="history-ranges" role="group" aria-label="Range">
          {RANGES.map((r) => (
            <button
              key={r.id}
              type="button"
              class="history-range"
              data-range={r.id}
              aria-pressed={r.id === range.id ? "true" : "false"}
              title={`The last ${r.label} in ${r.step === "1m" ? "minute" : "hour"} steps`}
              onClick={() => {
                setRangeId(r.id);
                setNow(Date.now());
              }}
            >
              {r.label}
            </button>
          ))}
        </div>
      </div>
      <ErrorBox error={res.error} id="queue-history-error" />
      {!h ? (
        !res.error && <Loading />
      ) : isEmpty(h) ? (
        <div id="queue-history-empty">
          <Empty>No history in the last {range.label}: nothing was enqueued, finished or waiting.</Empty>
        </div>
      ) : (
        <div class="history-charts">
          {CHARTS.map((c) => (
            <LineChart key={c.id} spec={c} h={h} span={range.span} stepLabel={range.step === "1m" ? "minute" : "hour"} />
          ))}
        </div>
      )}
    </section>
  );
}

const W = 560;
const H = 140;
const LEFT = 64; // room for the value labels
const BOTTOM = 22; // room for the time labels
const TOP = 8;

/** LineChart draws a chart's lines against one value axis from 0, with the range's first, middle and last steps on the time axis. */
function LineChart({ spec, h, span, stepLabel }: { spec: ChartSpec; h: History; span: number; stepLabel: string }) {
  const pw = W - LEFT - 6;
  const ph = H - TOP - BOTTOM;
  const max = Math.max(0, ...spec.lines.flatMap((l) => h.values[l.name]));
  const scale = niceScale(max, 4, spec.integer);
  const n = h.times.length;
  const marks = n > 0 ? [0, Math.floor((n - 1) / 2), n - 1] : [];
  const unit = spec.id === "throughput" ? `jobs per ${stepLabel}` : spec.unit;
  const summary = `${spec.title} (${unit}), ${timeLabel(h.times[0], span)} to ${timeLabel(h.times[n - 1] + h.step, span)} UTC: ${spec.lines
    .map((l) => `${l.label} peak ${spec.format(Math.max(0, ...h.values[l.name]))}`)
    .join(", ")}`;
  return (
    <figure class="history-chart" data-chart={spec.id}>
      <figcaption>
        {spec.title} <span class="muted">({unit})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        <title>{summary}</title>
        <g transform={`translate(${LEFT},${TOP})`}>
          {scale.ticks.map((t) => {
            const y = ph - (t / scale.top) * ph;
            return (
              <g key={t} class="tick">
                <line x1={0} x2={pw} y1={y} y2={y} class={t === 0 ? "axis" : "grid"} />
                <text x={-6} y={y} dy="0.32em" text-anchor="end">
                  {spec.format(t)}
                </text>
              </g>
            );
          })}
          {marks.map((i, k) => (
            <text key={k} class="tick" x={((i + 0.5) / n) * pw} y={ph + 18} text-anchor={k === 0 ? "start" : k === 2 ? "end" : "middle"}>
              {timeLabel(h.times[i], span)}
            </text>
          ))}
          {spec.lines.map((l) => (
            <polyline
              key={l.name}
              class={"line line-" + l.name}
              data-series={l.name}
              points={plot(h.values[l.name], scale.top, pw, ph)
                .map(([x, y]) => `${x},${y}`)
                .join(" ")}
            />
          ))}
        </g>
      </svg>
      {spec.lines.length > 1 && (
        <ul class="history-legend" aria-hidden="true">
          {spec.lines.map((l) => (
            <li key={l.name}>
              <span class={"swatch line-" + l.name} /> {l.label}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
