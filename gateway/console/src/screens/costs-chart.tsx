// The Costs screen's chart: cost per step as one line against a dollar
// axis from 0, drawn as the queue history charts are (plain SVG, their
// scale and plotting, their styles); its name reads out the total and
// the peak, exactly.
import { dollars, usd } from "../lib/cost";
import { niceScale, plot } from "./history-lib";
import { stepLabel, type CostPoint } from "./costs-lib";
import "./queue-history.css";

const W = 960;
const H = 200;
const LEFT = 72; // room for the dollar labels
const BOTTOM = 22;
const TOP = 8;

/** tickLabel writes an axis value in dollars, to the places its step needs. */
const tickLabel = (v: number) => "$" + v.toLocaleString("en-US", { maximumFractionDigits: 6 });

export function CostChart({ points, step }: { points: CostPoint[]; step: number }) {
  const pw = W - LEFT - 6;
  const ph = H - TOP - BOTTOM;
  const n = points.length;
  const peak = points.reduce<CostPoint | null>((p, x) => (!p || x.cost > p.cost ? x : p), null);
  const total = points.reduce((s, x) => s + x.cost, 0n);
  const scale = niceScale(peak ? dollars(peak.cost) : 0, 4);
  const marks = n > 0 ? [0, Math.floor((n - 1) / 2), n - 1] : [];
  const unit = step < 86_400_000 ? "hour" : "day";
  const summary =
    n === 0 ? "Cost: no data" : `Cost per ${unit} (UTC), ${stepLabel(points[0].start, step)} to ${stepLabel(points[n - 1].start, step)}: total ${usd(total)}, peak ${usd(peak!.cost)} on ${stepLabel(peak!.start, step)}`;
  return (
    <figure class="history-chart cost-chart" data-chart="cost" data-total={usd(total)}>
      <figcaption>
        Cost <span class="muted">(per {unit}, UTC)</span>
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
                  {tickLabel(t)}
                </text>
              </g>
            );
          })}
          {marks.map((i, k) => (
            <text key={k} class="tick" x={((i + 0.5) / n) * pw} y={ph + 18} text-anchor={k === 0 ? "start" : k === 2 ? "end" : "middle"}>
              {stepLabel(points[i].start, step)}
            </text>
          ))}
          <polyline
            class="line"
            data-series="cost"
            points={plot(
              points.map((p) => dollars(p.cost)),
              scale.top,
              pw,
              ph,
            )
              .map(([x, y]) => `${x},${y}`)
              .join(" ")}
          />
          {points.map((p, i) => (
            <circle key={p.start} class="cost-point" cx={((i + 0.5) / n) * pw} cy={ph - (dollars(p.cost) / scale.top) * ph} r={n > 40 ? 1.5 : 2.5} data-cost={usd(p.cost)}>
              <title>
                {stepLabel(p.start, step)}: {usd(p.cost)}
              </title>
            </circle>
          ))}
        </g>
      </svg>
    </figure>
  );
}
