// One meter's bars over the buckets, as inline SVG: the image's name
// summarises it; incomplete buckets are hatched and lighter, and named so
// in their titles.
import { barHeights, bucketLabel, chartSummary, meterValue, type MeterName, type UsageBucket } from "./usage-lib";

const W = 600;
const H = 120;

export function UsageChart(props: { meter: MeterName; label: string; buckets: UsageBucket[]; granularity: string }) {
  const { meter, buckets } = props;
  const heights = barHeights(
    buckets.map((b) => b.meters[meter]),
    H - 4,
  );
  const step = buckets.length ? W / buckets.length : W;
  const gap = step > 4 ? 1 : 0;
  const patternId = "hatch-" + meter;
  return (
    <figure class="usage-chart card" data-meter={meter}>
      <figcaption>{props.label}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={chartSummary(props.label, meter, buckets, props.granularity)}>
        <defs>
          <pattern id={patternId} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" class="bar-open-bg" />
            <line x1="0" y1="0" x2="0" y2="6" class="bar-open-line" />
          </pattern>
        </defs>
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} class="axis" />
        {buckets.map((b, i) => {
          const h = heights[i];
          return (
            <rect
              key={b.start}
              x={i * step}
              y={H - h}
              width={Math.max(0.5, step - gap)}
              height={h}
              class={b.incomplete ? "bar bar-open" : "bar"}
              fill={b.incomplete ? `url(#${patternId})` : undefined}
              data-incomplete={b.incomplete ? "true" : undefined}
            >
              <title>
                {bucketLabel(b.start, props.granularity)} UTC: {meterValue(meter, b.meters[meter])}
                {b.incomplete ? " (incomplete)" : ""}
              </title>
            </rect>
          );
        })}
      </svg>
      {buckets.length > 0 && (
        <div class="chart-axis muted" aria-hidden="true">
          <span>{bucketLabel(buckets[0].start, props.granularity)}</span>
          <span>{bucketLabel(buckets[buckets.length - 1].start, props.granularity)}</span>
        </div>
      )}
    </figure>
  );
}
