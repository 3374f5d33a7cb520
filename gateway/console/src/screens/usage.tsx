// Usage: the tenant's metered usage over a range (presets, by hour or
// day, kept in the URL), totals, a chart per meter, each namespace's
// totals, and the plan in effect. Metering lags (a shard's buckets are
// pulled every few seconds), so the open buckets are marked incomplete.
import { useMemo } from "preact/hooks";
import { qs } from "../api";
import { Options } from "../components/forms";
import { Table } from "../components/table";
import { ErrorBox, Field, Loading, Screen, Stat } from "../components/ui";
import { settled, useApi } from "../hooks";
import { Link, setParam, useLocation } from "../router";
import { UsageChart } from "./usage-chart";
import { granularityOf, METERS, meterValue, presetOf, PRESETS, rangeFor, type Usage as UsageData } from "./usage-lib";
import { PlanCard, type TenantPlan } from "./usage-plan";
import "./usage.css";

export function Usage() {
  const loc = useLocation();
  const preset = presetOf(loc.query.get("range"));
  const gran = granularityOf(loc.query.get("granularity"));
  const nsFilter = loc.query.get("namespace") ?? "";
  const refresh = loc.query.get("t") ?? "";
  // The range is fixed when its parameters change (or on Refresh), not at every render.
  const range = useMemo(() => rangeFor(preset, Date.now()), [preset, gran, nsFilter, refresh]);
  const usage = useApi<UsageData>("/api/v1/usage" + qs({ ...range, granularity: gran, namespace: nsFilter }));
  const plan = useApi<TenantPlan>("/api/v1/plan");
  // The namespaces seen in the range, for the filter (a billing key may not list namespaces).
  const all = useApi<UsageData>(nsFilter ? "/api/v1/usage" + qs({ ...range, granularity: gran }) : null);
  const seen = nsFilter ? all.data : usage.data;
  const names = useMemo(() => (seen?.namespaces ?? []).map((n) => n.namespace), [seen]);

  const u = usage.data;
  const tenantBuckets = u ? (nsFilter ? (u.namespaces.find((n) => n.namespace === nsFilter)?.buckets ?? []) : u.tenant) : [];
  const totals = u ? (nsFilter ? u.namespaces.find((n) => n.namespace === nsFilter)?.totals : u.totals) : undefined;
  const meters = nsFilter ? METERS.filter((m) => m.name !== "api_requests") : METERS;
  return (
    <Screen
      name="usage"
      title="Usage"
      ready={settled(usage)}
      actions={
        <>
          <Link href="/invoices">Invoices</Link>
          <button type="button" id="usage-refresh" onClick={() => setParam("t", String(Date.now()))}>
            Refresh
          </button>
        </>
      }
    >
      <div class="toolbar filters" role="group" aria-label="Usage range">
        <Field label="Range" for="usage-range">
          <select id="usage-range" value={preset} onChange={(e) => setParam("range", e.currentTarget.value === "24h" ? "" : e.currentTarget.value)}>
            <Options choices={PRESETS.map((p) => ({ value: p.value, label: p.label }))} />
          </select>
        </Field>
        <Field label="Granularity" for="usage-granularity">
          <select id="usage-granularity" value={gran} onChange={(e) => setParam("granularity", e.currentTarget.value === "hour" ? "" : e.currentTarget.value)}>
            <Options choices={[{ value: "hour", label: "By hour" }, { value: "day", label: "By day" }]} />
          </select>
        </Field>
        <Field label="Namespace" for="usage-namespace">
          <select id="usage-namespace" value={nsFilter} onChange={(e) => setParam("namespace", e.currentTarget.value)}>
            <Options choices={[{ value: "", label: "All namespaces" }, ...(names.includes(nsFilter) || !nsFilter ? names : [nsFilter, ...names])]} />
          </select>
        </Field>
      </div>
      <ErrorBox error={usage.error} id="usage-error" />
      {u ? (
        <>
          <p class="muted" id="usage-range-text">
            {new Date(u.from).toISOString().replace(".000Z", "Z")} to {new Date(u.to).toISOString().replace(".000Z", "Z")} (UTC), by {u.granularity}.
            {nsFilter ? " API requests are counted per tenant, not per namespace." : ""}
          </p>
          <div class="stats" id="usage-totals">
            {meters.map((m) => (
              <Stat key={m.name} stat={m.name} value={meterValue(m.name, totals?.[m.name] ?? 0)} label={m.label} />
            ))}
          </div>
          <p class="muted usage-legend">
            <span class="swatch-open" aria-hidden="true" /> Hatched bars are incomplete: the period is still open or not yet fully read.
          </p>
          <div class="usage-charts" id="usage-charts">
            {meters.map((m) => (
              <UsageChart key={m.name} meter={m.name} label={m.label} buckets={tenantBuckets} granularity={u.granularity} />
            ))}
          </div>
          <section class="usage-ns" aria-labelledby="usage-ns-h">
            <h2 id="usage-ns-h">By namespace</h2>
            {u.namespaces.length === 0 ? (
              <p class="empty">No usage in this range.</p>
            ) : (
              <Table id="usage-namespaces" caption="Each namespace's totals" cols={["Namespace", ...METERS.filter((m) => m.name !== "api_requests").map((m) => ({ label: m.label, num: true }))]}>
                {u.namespaces.map((n) => (
                  <tr key={n.namespace} data-namespace={n.namespace}>
                    <th scope="row">{n.namespace}</th>
                    {METERS.filter((m) => m.name !== "api_requests").map((m) => (
                      <td key={m.name} class="num" data-col={m.name}>
                        {meterValue(m.name, n.totals[m.name])}
                      </td>
                    ))}
                  </tr>
                ))}
              </Table>
            )}
          </section>
        </>
      ) : (
        !usage.error && <Loading />
      )}
      <ErrorBox error={plan.error} id="plan-error" />
      {plan.data && <PlanCard tp={plan.data} />}
    </Screen>
  );
}
