// Invoices: every month of the tenant (the running one, "upcoming",
// first) and one invoice's lines, totals, plan stretches and its CSV.
import { useEffect, useState } from "preact/hooks";
import { apiText, enc, isNotFound } from "../api";
import { Table } from "../components/table";
import { Badge, ErrorBox, KV, Loading, Missing, Screen, Unloaded } from "../components/ui";
import { settled, useApi } from "../hooks";
import { Link } from "../router";
import { grouped, parseExact } from "./invoice-lib";
import { meterLabel, money, periodLabel } from "./usage-lib";
import "./usage.css";

interface Period {
  start: string;
  end: string;
}
interface InvoiceSummary {
  id: string;
  period: Period;
  status: string;
  total: number;
  currency: string;
}
interface InvoiceLine {
  meter: string;
  namespace?: string;
  plan: string;
  plan_version: number;
  from: string;
  to: string;
  // Exact integers that may exceed 2^53: their digits (parseExact).
  quantity: string;
  quantity_unit: string;
  included_applied: string;
  billable: string;
  unit: number;
  unit_price: number;
  billed_units: string;
  amount: number;
}
interface Invoice {
  id: string;
  period: Period;
  currency: string;
  status: string;
  plans: { name: string; version: number; currency: string; from: string; to: string }[];
  lines: InvoiceLine[];
  subtotal: number;
  total: number;
}

export const invoicePath = (id: string) => "/invoices/" + enc(id);
const iso = (t: string) => new Date(t).toISOString().replace(":00.000Z", "Z");

/** useInvoice loads one invoice with its quantities exact. */
function useInvoice(id: string): { data?: Invoice; error?: Error } {
  const [st, setSt] = useState<{ data?: Invoice; error?: Error }>({});
  useEffect(() => {
    const ctl = new AbortController();
    setSt({});
    apiText("GET", "/api/v1/invoices/" + enc(id), undefined, { signal: ctl.signal }).then(
      (t) => setSt({ data: parseExact<Invoice>(t) }),
      (error: Error) => ctl.signal.aborted || setSt({ error }),
    );
    return () => ctl.abort();
  }, [id]);
  return st;
}

function StatusBadge({ status }: { status: string }) {
  return (
    <Badge class={status === "closed" ? "state-completed" : "state-active"} glyph={status === "closed" ? "✓" : "●"} data-status={status}>
      {status}
    </Badge>
  );
}

export function Invoices() {
  const list = useApi<{ invoices: InvoiceSummary[] }>("/api/v1/invoices");
  const rows = list.data?.invoices ?? [];
  // The running month comes first whatever the order the API sends.
  const now = Date.now();
  const isUpcoming = (i: InvoiceSummary) => Date.parse(i.period.start) <= now && now < Date.parse(i.period.end);
  const sorted = [...rows].sort((a, b) => Number(isUpcoming(b)) - Number(isUpcoming(a)) || Date.parse(b.period.start) - Date.parse(a.period.start));
  return (
    <Screen name="invoices" title="Invoices" ready={settled(list)} actions={<Link href="/usage">Usage</Link>}>
      <ErrorBox error={list.error} />
      {list.data ? (
        sorted.length === 0 ? (
          <p class="empty">No invoices yet.</p>
        ) : (
          <Table id="invoices" caption="Invoices, the upcoming one first" cols={["Period", "Status", { label: "Total", num: true }, { label: "Invoice", hidden: true }]}>
            {sorted.map((i) => (
              <tr key={i.id} data-invoice={i.id} data-upcoming={isUpcoming(i) ? "true" : undefined}>
                <td>
                  <Link href={invoicePath(i.id)}>{periodLabel(i.period.start)}</Link>
                  {isUpcoming(i) && <span class="badge state-scheduled upcoming"> upcoming</span>}
                </td>
                <td>
                  <StatusBadge status={i.status} />
                </td>
                <td class="num" data-col="total">
                  {money(i.total, i.currency)}
                </td>
                <td class="muted">
                  <code>{i.id}</code>
                </td>
              </tr>
            ))}
          </Table>
        )
      ) : (
        !list.error && <Loading />
      )}
    </Screen>
  );
}

export function InvoiceDetail({ id }: { id: string }) {
  const inv = useInvoice(id);
  const v = inv.data;
  if (!v && isNotFound(inv.error, true))
    return (
      <Missing name="invoice" title="Invoice" id="invoice-missing" message={`There is no invoice ${id}.`}>
        <Link href="/invoices">All invoices</Link>
      </Missing>
    );
  if (!v) return <Unloaded name="invoice" title="Invoice" error={inv.error} />;
  return (
    <Screen
      name="invoice"
      title={"Invoice " + periodLabel(v.period.start)}
      ready={true}
      actions={
        <>
          <Link href="/invoices">All invoices</Link>
          <a id="invoice-csv" class="button" href={"/api/v1/invoices/" + enc(v.id) + "/csv"} download={v.id + ".csv"}>
            Download CSV
          </a>
        </>
      }
    >
      <dl class="kv">
        <KV k="Invoice">
          <code id="invoice-id">{v.id}</code>
        </KV>
        <KV k="Period">
          {iso(v.period.start)} to {iso(v.period.end)} (UTC)
        </KV>
        <KV k="Status">
          <StatusBadge status={v.status} />
          {v.status === "open" && <span class="muted"> — still changing until the month closes</span>}
        </KV>
        <KV k="Currency">{v.currency}</KV>
      </dl>
      <h2>Plans</h2>
      <Table id="invoice-plans" caption="The plan stretches of the period" cols={["Plan", { label: "Version", num: true }, "From", "To"]}>
        {v.plans.map((p) => (
          <tr key={p.name + p.version + p.from}>
            <td>{p.name}</td>
            <td class="num">{p.version}</td>
            <td>{iso(p.from)}</td>
            <td>{iso(p.to)}</td>
          </tr>
        ))}
      </Table>
      <h2>Lines</h2>
      {v.lines.length === 0 ? (
        <p class="empty">No usage in this period.</p>
      ) : (
        <Table
          id="invoice-lines"
          caption="Invoice lines"
          cols={[
            "Meter",
            "Namespace",
            "Plan",
            { label: "Quantity", num: true },
            { label: "Included applied", num: true },
            { label: "Billable", num: true },
            { label: "Unit price", num: true },
            { label: "Amount", num: true },
          ]}
        >
          {v.lines.map((l, i) => (
            <tr key={i} data-meter={l.meter} data-namespace={l.namespace ?? ""}>
              <td>{meterLabel(l.meter)}</td>
              <td>{l.namespace ?? <span class="muted">tenant</span>}</td>
              <td>
                {l.plan} <span class="muted">v{l.plan_version}</span>
              </td>
              <td class="num" data-col="quantity">
                {grouped(l.quantity)} <span class="muted">{l.quantity_unit}</span>
              </td>
              <td class="num">{grouped(l.included_applied)}</td>
              <td class="num">{grouped(l.billable)}</td>
              <td class="num">{l.unit ? `${money(l.unit_price, v.currency)} / ${grouped(l.unit)}` : "—"}</td>
              <td class="num" data-col="amount">
                {money(l.amount, v.currency)}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <dl class="kv invoice-totals" id="invoice-totals">
        <KV k="Subtotal" data-total="subtotal">
          {money(v.subtotal, v.currency)}
        </KV>
        <KV k="Total" data-total="total">
          <strong>{money(v.total, v.currency)}</strong>
        </KV>
      </dl>
    </Screen>
  );
}
