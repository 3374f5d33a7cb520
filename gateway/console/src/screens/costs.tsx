// Costs: the namespace's model usage (GET /api/v1/ai/usage) over today,
// 7 or 30 UTC days, grouped by queue, model, tag or namespace (both kept
// in the URL), with tokens by kind and cost per group, a chart of cost
// per step (one request with step), and the namespace's budgets against
// today's spend.
import { useMemo } from "preact/hooks";
import { Options } from "../components/forms";
import { Table } from "../components/table";
import { Empty, ErrorBox, Field, Loading, Screen, Stat } from "../components/ui";
import { useApi } from "../hooks";
import { exact } from "../lib/format";
import { usd, usdOf } from "../lib/cost";
import { setParam, useLocation } from "../router";
import { CostBudgets } from "./costs-budgets";
import { CostChart } from "./costs-chart";
import {
  byCost,
  COST_RANGES,
  costRangeOf,
  costPoints,
  costSeries,
  costWindow,
  groupingOf,
  groupLabel,
  GROUPINGS,
  seriesPath,
  totalsOf,
  usagePath,
  type AIUsage,
} from "./costs-lib";
import "./costs.css";

export function Costs() {
  const loc = useLocation();
  const range = costRangeOf(loc.query.get("range"));
  const grouping = groupingOf(loc.query.get("group_by"));
  const refresh = loc.query.get("t") ?? "";
  // The window is fixed when the range changes (or on Refresh), not at every render.
  const [w, s] = useMemo(() => {
    const now = Date.now();
    const w = costWindow(range, now);
    return [w, costSeries(w, now)] as const;
  }, [range, refresh]);
  const grouped = useApi<AIUsage>(usagePath(w, grouping));
  const chart = useApi<AIUsage>(seriesPath(s));
  const points = chart.data && costPoints(chart.data, s);
  const totals = points && chart.data ? totalsOf(chart.data.groups) : undefined;
  const chartError = chart.loading ? undefined : chart.error;
  const groups = grouped.data ? byCost(grouped.data.groups) : [];

  return (
    <Screen
      name="costs"
      title="Costs"
      ready={(grouped.data !== undefined || grouped.error !== undefined) && (points !== undefined || chartError !== undefined)}
      actions={
        <button type="button" id="costs-refresh" onClick={() => setParam("t", String(Date.now()))}>
          Refresh
        </button>
      }
    >
      <p class="muted">
        What the namespace’s workers reported their model calls used, summed by UTC hour. Cost is in dollars as reported, added exactly.
      </p>
      <div class="toolbar filters" role="group" aria-label="Costs range and grouping">
        <Field label="Range" for="costs-range">
          <select id="costs-range" value={range} onChange={(e) => setParam("range", e.currentTarget.value)}>
            <Options choices={COST_RANGES.map((r) => ({ value: r.value, label: r.label }))} />
          </select>
        </Field>
        <Field label="Group by" for="costs-group">
          <select id="costs-group" value={grouping} onChange={(e) => setParam("group_by", e.currentTarget.value)}>
            <Options choices={GROUPINGS.map((g) => ({ value: g.value, label: g.label }))} />
          </select>
        </Field>
      </div>
      <p class="muted" id="costs-range-text">
        {new Date(w.from).toISOString().slice(0, 10)} to {new Date(w.to - 1).toISOString().slice(0, 10)} (UTC days).
      </p>
      <ErrorBox error={chartError} id="costs-series-error" />
      {totals && (
        <div class="stats" id="costs-totals">
          <Stat stat="cost" value={usd(totals.cost)} label="Cost" />
          <Stat stat="input" value={exact(totals.input)} label="Input tokens" />
          <Stat stat="output" value={exact(totals.output)} label="Output tokens" />
          <Stat stat="cache_read" value={exact(totals.cacheRead)} label="Cache read tokens" />
          <Stat stat="cache_write" value={exact(totals.cacheWrite)} label="Cache write tokens" />
          <Stat stat="reports" value={exact(totals.reports)} label="Reports" />
        </div>
      )}
      {points && (
        <div class="card costs-chart-card">
          {totals && totals.cost === 0n && totals.reports === 0 ? (
            <div id="costs-chart-empty">
              <Empty>No usage reported in this range.</Empty>
            </div>
          ) : (
            <CostChart points={points} step={s.step} />
          )}
        </div>
      )}
      <section aria-labelledby="costs-groups-h">
        <h2 id="costs-groups-h">By {GROUPINGS.find((g) => g.value === grouping)!.label.toLowerCase()}</h2>
        <ErrorBox error={grouped.error} id="costs-error" />
        {grouping === "tag" && <p class="muted">A job with several tags counts under each of them, so these rows may add up to more than the total.</p>}
        {!grouped.data ? (
          !grouped.error && <Loading />
        ) : groups.length === 0 ? (
          <Empty>No usage reported in this range.</Empty>
        ) : (
          <Table
            id="costs-groups"
            caption="Usage per group"
            cols={[
              GROUPINGS.find((g) => g.value === grouping)!.label,
              { label: "Input", num: true },
              { label: "Output", num: true },
              { label: "Cache read", num: true },
              { label: "Cache write", num: true },
              { label: "Reports", num: true },
              { label: "Cost", num: true },
            ]}
          >
            {groups.map((g) => (
              <tr key={g.key} data-group={g.key}>
                <th scope="row" class={g.key === "" ? "muted" : "mono"}>
                  {groupLabel(grouping, g.key)}
                </th>
                <td class="num" data-col="input">{exact(g.input_tokens)}</td>
                <td class="num" data-col="output">{exact(g.output_tokens)}</td>
                <td class="num" data-col="cache_read">{exact(g.cache_read_tokens)}</td>
                <td class="num" data-col="cache_write">{exact(g.cache_write_tokens)}</td>
                <td class="num" data-col="reports">{exact(g.reports)}</td>
                <td class="num" data-col="cost">{usdOf(g.cost_usd)}</td>
              </tr>
            ))}
          </Table>
        )}
      </section>
      <CostBudgets />
    </Screen>
  );
}
