// The Webhooks screens: the namespace's lifecycle webhook endpoints (list,
// create, edit, delete), and one endpoint with its settings and delivery
// log (status, latency, error of its last attempts), a Test button, a
// Redeliver button on each logged event and its secret's rotation.
import { useMemo, useState } from "preact/hooks";
import { del, isNotFound, post } from "../api";
import { useApi, useInterval } from "../hooks";
import { Link, navigate, setParam, useLocation } from "../router";
import { useSession } from "../session";
import { Badge, ConfirmOn, Empty, ErrorBox, KV, Loading, Missing, Notice, Screen, Unloaded } from "../components/ui";
import { FilterBox } from "../components/forms";
import { RowButton, Table } from "../components/table";
import { plural } from "../lib/format";
import { utc } from "./job-model";
import { WebhookDialog, WebhookRotate, type WebhookTarget } from "./webhook-dialog";
import {
  attemptNotice,
  eventsText,
  isTest,
  latencyText,
  matches,
  queuesText,
  statusText,
  webhookHref,
  webhookPath,
  webhookState,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookList,
} from "./webhooks-lib";
import "./webhooks.css";

/** How often an open endpoint's delivery log is read again. */
const LOG_REFRESH_MS = 5000;

function StateBadge({ w }: { w: Webhook }) {
  const s = webhookState(w);
  return (
    <Badge class={"webhook-state " + s.cls} glyph={s.glyph}>
      {s.label}
    </Badge>
  );
}

export function Webhooks() {
  const { can } = useSession();
  const manage = can("webhook.manage");
  const filter = useLocation().query.get("q") ?? "";
  const list = useApi<WebhookList>("/api/v1/webhooks");
  const [dialog, setDialog] = useState<WebhookTarget | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [notice, setNotice] = useState("");
  const all = list.data?.webhooks ?? [];
  const shown = useMemo(() => all.filter((w) => matches(w, filter)), [list.data, filter]);

  return (
    <Screen
      name="webhooks"
      title="Webhooks"
      ready={list.data !== undefined || list.error !== undefined}
      actions={
        manage && (
          <button type="button" id="webhook-new" class="primary" onClick={() => setDialog("new")}>
            New endpoint
          </button>
        )
      }
    >
      <p class="muted">
        Each endpoint receives the namespace’s job events it subscribes to as signed CloudEvents, at least once and in order, retried for 24 hours.
      </p>
      <div class="toolbar">
        <FilterBox id="webhook-filter" label="Filter endpoints" class="webhook-filter" placeholder="Filter by URL, description, event or queue" value={filter} onInput={(q) => setParam("q", q)} />
        {list.data && (
          <span class="muted" aria-live="polite">
            {shown.length === all.length ? `${all.length} ${plural(all.length, "endpoint")}` : `${shown.length} of ${all.length}`}
          </span>
        )}
      </div>
      <ErrorBox error={list.error} />
      <Notice id="webhooks-notice">{notice}</Notice>
      {list.data && all.length === 0 && <Empty>No webhook endpoints in this namespace yet.</Empty>}
      {list.data && all.length > 0 && shown.length === 0 && <Empty>No endpoint matches “{filter}”.</Empty>}
      {shown.length > 0 && (
        <Table id="webhooks" class="webhooks" cols={["Endpoint", "Events", "Queues", "Status", "Description", manage && { label: "Actions", hidden: true }]}>
          {shown.map((w) => (
            <tr key={w.id} data-webhook={w.id}>
              <td class="webhook-url">
                <Link href={webhookHref(w.id)} class="mono">
                  {w.url}
                </Link>
              </td>
              <td class="webhook-events">{eventsText(w.events)}</td>
              <td class="webhook-queues">{queuesText(w.queues)}</td>
              <td>
                <StateBadge w={w} />
              </td>
              <td class="webhook-description">{w.description || <span class="muted">—</span>}</td>
              {manage && (
                <td>
                  <div class="row-actions">
                    <RowButton class="webhook-edit" name={`Edit endpoint ${w.url}`} onClick={() => setDialog(w)}>
                      Edit
                    </RowButton>
                    <RowButton class="webhook-delete" danger name={`Delete endpoint ${w.url}`} onClick={() => setDeleting(w)}>
                      Delete
                    </RowButton>
                  </div>
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      {manage && (
        <WebhookDialog
          target={dialog}
          onClose={() => setDialog(null)}
          onSaved={(w, created) => {
            setNotice(`Endpoint ${w.url} ${created ? "created" : "saved"}.`);
            setDialog(null);
            list.reload();
          }}
        />
      )}
      {manage && (
        <DeleteWebhook
          target={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={(w) => {
            setNotice(`Endpoint ${w.url} deleted.`);
            list.reload();
          }}
        />
      )}
    </Screen>
  );
}

function DeleteWebhook(props: { target: Webhook | null; onClose: () => void; onDeleted: (w: Webhook) => void }) {
  return (
    <ConfirmOn
      item={props.target}
      title="Delete webhook endpoint"
      confirmLabel="Delete"
      danger
      onClose={props.onClose}
      onConfirm={async (w) => {
        await del(webhookPath(w.id));
        props.onDeleted(w);
      }}
    >
      <p>
        Delete the endpoint <strong class="mono">{props.target?.url}</strong>? Nothing more is delivered to it.
      </p>
    </ConfirmOn>
  );
}

/** WebhookDetail is one endpoint: its settings, its delivery log, and the Test, Edit, Rotate secret and Delete actions. */
export function WebhookDetail({ id }: { id: string }) {
  const { can } = useSession();
  const manage = can("webhook.manage");
  const hook = useApi<Webhook>(webhookPath(id));
  const log = useApi<WebhookDeliveryList>(webhookPath(id) + "/deliveries");
  useInterval(log.reload, LOG_REFRESH_MS);
  const [dialog, setDialog] = useState<WebhookTarget | null>(null);
  const [rotating, setRotating] = useState<Webhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [busy, setBusy] = useState("");
  const [notice, setNotice] = useState("");
  const [actionError, setActionError] = useState<Error | null>(null);

  const attempt = async (key: string, what: string, call: () => Promise<WebhookDelivery>) => {
    setBusy(key);
    setNotice("");
    setActionError(null);
    try {
      setNotice(attemptNotice(what, await call()));
      log.reload();
      hook.reload();
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setBusy("");
    }
  };

  if (isNotFound(hook.error, true))
    return (
      <Missing name="webhook" title={"Webhook " + id} id="webhook-not-found" message={<>Webhook endpoint {id} not found in this namespace.</>}>
        <Link href="/webhooks">All endpoints</Link>
      </Missing>
    );
  const w = hook.data?.id === id ? hook.data : undefined;
  if (!w) return <Unloaded name="webhook" title={"Webhook " + id} error={hook.error} />;
  const deliveries = log.data?.deliveries ?? [];
  return (
    <Screen
      name="webhook"
      title="Webhook endpoint"
      ready={true}
      actions={
        manage && (
          <>
            <button type="button" id="webhook-test" class="primary" disabled={busy !== ""} onClick={() => attempt("test", "Test event", () => post<WebhookDelivery>(webhookPath(id) + "/test"))}>
              Send a test event
            </button>
            <button type="button" id="webhook-edit" onClick={() => setDialog(w)}>
              Edit
            </button>
            <button type="button" id="webhook-rotate" onClick={() => setRotating(w)}>
              Rotate secret
            </button>
            <button type="button" id="webhook-delete" class="danger" onClick={() => setDeleting(w)}>
              Delete
            </button>
          </>
        )
      }
    >
      <ErrorBox error={hook.error} />
      <ErrorBox id="webhook-action-error" error={actionError} />
      <Notice id="webhook-notice">{notice}</Notice>
      <section class="card">
        <h2>Settings</h2>
        <dl class="kv" id="webhook-settings">
          <KV k="URL" class="mono" id="webhook-url-value">
            {w.url}
          </KV>
          <KV k="Status" id="webhook-status">
            <StateBadge w={w} />
            {w.disabled && (
              <span class="webhook-disabled-reason">
                {" "}
                since {utc(w.disabled.at)}: {w.disabled.reason}. Saving the endpoint enables it again.
              </span>
            )}
            {!w.disabled && w.failing_since && <span> since {utc(w.failing_since)}</span>}
          </KV>
          <KV k="Events" id="webhook-events-value">
            {eventsText(w.events)}
          </KV>
          <KV k="Queues" id="webhook-queues-value">
            {queuesText(w.queues)}
          </KV>
          <KV k="Description">{w.description || <span class="muted">—</span>}</KV>
          <KV k="Secrets" id="webhook-secrets">
            {w.secret_ids.length === 0 ? <span class="muted">none: signed with the namespace’s keys only</span> : w.secret_ids.join(", ")}
          </KV>
          <KV k="Id" class="mono">
            {w.id}
          </KV>
          <KV k="Created">{utc(w.created_at)}</KV>
          <KV k="Changed">{utc(w.updated_at)}</KV>
        </dl>
      </section>
      <section class="card">
        <div class="toolbar">
          <h2 class="webhook-log-h">Delivery log</h2>
          <button type="button" id="webhook-log-refresh" onClick={log.reload}>
            Refresh
          </button>
        </div>
        <p class="muted">The last 50 attempts, newest first, kept by the shard’s leader (the log starts empty after a leader change).</p>
        <ErrorBox error={log.error} />
        {log.data === undefined ? (
          !log.error && <Loading />
        ) : deliveries.length === 0 ? (
          <Empty>No delivery attempts yet.</Empty>
        ) : (
          <Table id="webhook-deliveries" class="webhook-deliveries" cols={["At", "Event", "Type", "Attempt", "Status", "Latency", "Error", manage && { label: "Actions", hidden: true }]}>
            {deliveries.map((d, i) => (
              <tr key={d.event_id + d.at + i} data-event={d.event_id} data-ok={d.ok ? "true" : "false"}>
                <td>{utc(d.at)}</td>
                <td class="mono">{d.event_id}</td>
                <td class="delivery-type">{d.type}</td>
                <td class="num">{d.attempt}</td>
                <td class="delivery-status">
                  <Badge class={d.ok ? "webhook-on" : "webhook-disabled"} glyph={d.ok ? "✓" : "✕"}>
                    {statusText(d)}
                  </Badge>
                </td>
                <td class="num delivery-latency">{latencyText(d.latency_ms)}</td>
                <td class="delivery-error">{d.error || <span class="muted">—</span>}</td>
                {manage && (
                  <td>
                    {!isTest(d) && (
                      <RowButton
                        class="delivery-redeliver"
                        name={`Redeliver event ${d.event_id}`}
                        disabled={busy !== ""}
                        onClick={() => attempt("redeliver", `Redelivery of ${d.event_id}`, () => post<WebhookDelivery>(webhookPath(id) + "/redeliver", { event_id: d.event_id }))}
                      >
                        Redeliver
                      </RowButton>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </Table>
        )}
      </section>
      {manage && (
        <>
          <WebhookDialog
            target={dialog}
            onClose={() => setDialog(null)}
            onSaved={() => {
              setNotice("Endpoint saved.");
              setDialog(null);
              hook.reload();
            }}
          />
          <WebhookRotate
            target={rotating}
            onClose={() => setRotating(null)}
            onRotated={() => {
              setNotice("The endpoint’s secret was rotated.");
              setRotating(null);
              hook.reload();
            }}
          />
          <DeleteWebhook target={deleting} onClose={() => setDeleting(null)} onDeleted={() => navigate("/webhooks")} />
        </>
      )}
    </Screen>
  );
}
