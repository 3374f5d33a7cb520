// A sparkline: a few numbers as a small inline SVG line, drawn in the
// text's colour (currentColor), so it follows the theme. Its accessible
// name reads the numbers out.

/** sparkPoints maps values onto a w×h box (y grows downward), leaving pad for the stroke; the scale includes zero, so all zeros lie flat at the bottom. */
export function sparkPoints(values: number[], w: number, h: number, pad = 1.5): [number, number][] {
  if (values.length === 0) return [];
  const max = Math.max(...values, 0);
  const min = Math.min(...values, 0);
  const span = max - min || 1;
  const step = values.length > 1 ? (w - 2 * pad) / (values.length - 1) : 0;
  return values.map((v, i) => {
    const x = values.length > 1 ? pad + i * step : w / 2;
    const y = h - pad - ((v - min) / span) * (h - 2 * pad);
    return [round(x), round(y)];
  });
}

const round = (n: number) => Math.round(n * 100) / 100;

/** sparkLabel is the sparkline's accessible name: "completions per minute: 1, 4, 2". */
export function sparkLabel(values: number[], label = "completions per minute"): string {
  return `${label}: ${values.join(", ")}`;
}

export function Sparkline(props: { values: number[] | null | undefined; label?: string; width?: number; height?: number; class?: string }) {
  const values = props.values;
  if (!values || values.length === 0) return null;
  const w = props.width ?? 64;
  const h = props.height ?? 18;
  const pts = sparkPoints(values, w, h);
  const line = pts.map(([x, y]) => `${x},${y}`).join(" ");
  const area = `${pts[0][0]},${h} ${line} ${pts[pts.length - 1][0]},${h}`;
  const [lx, ly] = pts[pts.length - 1];
  const name = sparkLabel(values, props.label);
  return (
    <svg
      class={"sparkline" + (props.class ? " " + props.class : "")}
      role="img"
      aria-label={name}
      width={w}
      height={h}
      viewBox={`0 0 ${w} ${h}`}
      preserveAspectRatio="none"
    >
      <title>{name}</title>
      <polygon points={area} fill="currentColor" fill-opacity="0.15" stroke="none" />
      <polyline points={line} fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round" />
      <circle cx={lx} cy={ly} r="1.8" fill="currentColor" />
    </svg>
  );
}
