// The plan in effect: its limits, what each month includes and its
// prices, and a pending change with the hour it takes effect.
import { KV, Time } from "../components/ui";
import { exact } from "../lib/format";
import { meterLabel, meterValue, money } from "./usage-lib";

export interface Plan {
  name: string;
  description?: string;
  currency: string;
  prices?: Record<string, { unit: number; price: number }>;
  included?: Record<string, number>;
  limits: Record<string, number | string | undefined>;
  version?: number;
}
export interface TenantPlan {
  tenant_id: string;
  plan: Plan;
  since: string;
  next?: Plan;
  next_from?: string;
}

const LIMITS: [string, string][] = [
  ["requests_per_second", "Requests per second"],
  ["enqueues_per_second", "Enqueues per second"],
  ["max_pending_jobs", "Pending jobs per namespace"],
  ["max_namespaces", "Namespaces"],
  ["max_keys", "API keys"],
  ["max_schedules", "Schedules"],
  ["max_payload_bytes", "Payload bytes"],
  ["monthly_executions", "Executions per month"],
];

// The event log's retention: the plan's, else the defaults (24 h and
// 100,000 events per namespace).
function retention(l: Plan["limits"]): string {
  const hours = typeof l.event_retention_hours === "number" ? l.event_retention_hours : 24;
  const events = typeof l.event_retention_events === "number" ? l.event_retention_events : 100000;
  return `${exact(hours)} h, at most ${exact(events)} events per namespace`;
}

export function PlanCard({ tp }: { tp: TenantPlan }) {
  const p = tp.plan;
  const enf = p.limits.monthly_executions_enforcement;
  return (
    <section class="card plan-card" id="usage-plan" aria-labelledby="usage-plan-h">
      <h2 id="usage-plan-h">
        Plan: <span id="plan-name">{p.name}</span>
      </h2>
      {p.description && <p class="muted">{p.description}</p>}
      <dl class="kv">
        <KV k="In effect since">
          <Time at={tp.since} />
        </KV>
        <KV k="Currency">{p.currency || "USD"}</KV>
        {LIMITS.map(([k, label]) => (
          <KV key={k} k={label} data-limit={k}>
            {typeof p.limits[k] === "number" ? exact(p.limits[k] as number) : "no limit"}
            {k === "monthly_executions" && enf ? ` (${enf})` : ""}
          </KV>
        ))}
        <KV k="Event log kept" data-limit="event_retention">
          {retention(p.limits)}
        </KV>
      </dl>
      {(p.included && Object.keys(p.included).length > 0) || (p.prices && Object.keys(p.prices).length > 0) ? (
        <div class="table-wrap">
          <table class="data" id="plan-meters">
            <caption class="sr-only">Included amounts and prices per meter</caption>
            <thead>
              <tr>
                <th scope="col">Meter</th>
                <th scope="col" class="num">
                  Included per month
                </th>
                <th scope="col" class="num">
                  Price
                </th>
              </tr>
            </thead>
            <tbody>
              {Array.from(new Set([...Object.keys(p.included ?? {}), ...Object.keys(p.prices ?? {})])).map((m) => {
                const pr = p.prices?.[m];
                return (
                  <tr key={m} data-meter={m}>
                    <td>{meterLabel(m)}</td>
                    <td class="num">{p.included?.[m] !== undefined ? meterValue(m, p.included[m]) : "—"}</td>
                    <td class="num">{pr ? `${money(pr.price, p.currency)} per ${exact(pr.unit)}` : "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {tp.next && (
        <p class="notice" id="plan-next">
          Changing to plan <strong>{tp.next.name}</strong> from{" "}
          {tp.next_from ? (
            <time dateTime={tp.next_from}>{new Date(tp.next_from).toISOString().replace(".000Z", "Z")}</time>
          ) : (
            "the next hour"
          )}
          .
        </p>
      )}
    </section>
  );
}
