// Model cost as the API writes it: a decimal string of dollars with at
// most 9 places ("0.0042"). Summed and written exactly in nano-dollars
// (BigInt), never as a float, so a column's total is the sum of its rows
// to the last digit; only a chart's geometry reads it as a number.

const SCALE = 1_000_000_000n;
const PLACES = 9;
const costRe = /^(\d+)(?:\.(\d{1,9}))?$/;

/** parseCost reads a cost_usd string into nano-dollars; a missing or malformed one is 0. */
export function parseCost(s: string | null | undefined): bigint {
  const m = costRe.exec(s ?? "");
  if (!m) return 0n;
  return BigInt(m[1]) * SCALE + BigInt((m[2] ?? "").padEnd(PLACES, "0") || "0");
}

/** sumCosts adds cost_usd strings exactly. */
export function sumCosts(costs: (string | null | undefined)[]): bigint {
  return costs.reduce((n, c) => n + parseCost(c), 0n);
}

/** usd writes nano-dollars as dollars: every cent, and the places below a cent only when there are any ("$1,234.50", "$0.0042"). */
export function usd(nanos: bigint): string {
  const neg = nanos < 0n;
  const a = neg ? -nanos : nanos;
  const whole = (a / SCALE).toLocaleString("en-US");
  const frac = (a % SCALE).toString().padStart(PLACES, "0").replace(/0+$/, "").padEnd(2, "0");
  return (neg ? "-$" : "$") + whole + "." + frac;
}

/** usdOf writes a cost_usd string as dollars ("0.0042" → "$0.0042"). */
export const usdOf = (s: string | null | undefined): string => usd(parseCost(s));

/** dollars is nano-dollars as a number of dollars, for a chart's geometry only. */
export const dollars = (nanos: bigint): number => Number(nanos) / 1e9;
