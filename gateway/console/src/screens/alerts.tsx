// The Alerts screen: the namespace's alert rules with their state (ok or
// firing, since when, the last value measured), create and edit in a
// dialog, enable or disable, and delete after a confirmation; and the
// dashboard's card of the rules firing. The shard leader evaluates rules
// every 15 s, so both read them again as often.
import { useState } from "preact/hooks";
import { ApiError, del, put } from "../api";
import { useApi, useInterval, type Loaded } from "../hooks";
import { Link } from "../router";
import { useSession } from "../session";
import { Badge, ConfirmOn, Empty, ErrorBox, Loading, Notice, Screen, Time } from "../components/ui";
import { RowButton, Table } from "../components/table";
import { counted } from "../lib/format";
import { AlertDialog, type AlertTarget } from "./alert-dialog";
import { alertPath, conditionText, firingRules, lastValue, stateOf, toggled, valueText, type AlertRule, type AlertRuleList } from "./alerts-lib";
import "./alerts.css";

/** How often the rules' state is read again: the leader's evaluation interval. */
export const ALERT_REFRESH_MS = 15_000;

function StateBadge({ r }: { r: AlertRule }) {
  const s = stateOf(r);
  return (
    <Badge class={"alert-state alert-" + s.cls} glyph={s.glyph}>
      {s.label}
    </Badge>
  );
}

/** isForbidden is true for a 403: the key's role may not read the rules (or covers only some queues). */
const isForbidden = (e: unknown) => e instanceof ApiError && e.status === 403;

export function Alerts() {
  const { can } = useSession();
  const manage = can("queue.manage");
  const list = useApi<AlertRuleList>("/api/v1/alerts");
  useInterval(list.reload, ALERT_REFRESH_MS);
  const [dialog, setDialog] = useState<AlertTarget | null>(null);
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState("");
  const [actionError, setActionError] = useState<Error | null>(null);
  const rules = list.data?.alerts ?? [];
  const firing = firingRules(rules).length;

  const toggle = async (r: AlertRule) => {
    setBusy(r.name);
    setActionError(null);
    try {
      const saved = await put<AlertRule>(alertPath(r.name), toggled(r));
      setNotice(`Rule ${saved.name} ${saved.enabled ? "enabled" : "disabled"}.`);
      list.reload();
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setBusy("");
    }
  };

  return (
    <Screen
      name="alerts"
      title="Alerts"
      ready={list.data !== undefined || list.error !== undefined}
      actions={
        manage &&
        !isForbidden(list.error) && (
          <button type="button" id="alert-new" class="primary" onClick={() => setDialog("new")}>
            New rule
          </button>
        )
      }
    >
      <p class="muted">
        Rules watch the namespace’s queues; the shard evaluates them every 15 seconds. Firing and resolving are the events <code>alert.firing</code> and{" "}
        <code>alert.resolved</code>, delivered by the namespace’s <Link href="/webhooks">webhooks</Link>.
      </p>
      {isForbidden(list.error) ? (
        <p class="muted" id="alerts-forbidden">
          This key’s role may not read the namespace’s alert rules (they need a role over every queue of the namespace).
        </p>
      ) : (
        <ErrorBox error={list.error} />
      )}
      <ErrorBox id="alerts-action-error" error={actionError} />
      <Notice id="alerts-notice">{notice}</Notice>
      {list.data && (
        <p class="muted" aria-live="polite" id="alerts-count">
          {counted(rules.length, "rule")}
          {firing > 0 && `, ${firing} firing`}
        </p>
      )}
      {list.data && rules.length === 0 && <Empty>No alert rules in this namespace yet.</Empty>}
      {rules.length > 0 && (
        <Table id="alerts" class="alerts" cols={["Rule", "Queue", "Condition", "State", "Since", "Last value", manage && { label: "Actions", hidden: true }]}>
          {rules.map((r) => {
            const v = lastValue(r);
            return (
              <tr key={r.name} data-alert={r.name} data-state={r.enabled ? r.state : "off"}>
                <td class="alert-name mono">{r.name}</td>
                <td class="alert-queue">{r.queue ? <span class="mono">{r.queue}</span> : <span class="muted">every queue</span>}</td>
                <td class="alert-condition">{conditionText(r)}</td>
                <td class="alert-state-cell">
                  <StateBadge r={r} />
                </td>
                <td class="alert-since">{r.since ? <Time at={r.since} /> : <span class="muted">—</span>}</td>
                <td class="alert-value">
                  {v ? (
                    <>
                      {valueText(r.kind, v.value)}
                      {!r.queue && <span class="muted"> on {v.queue}</span>}
                    </>
                  ) : (
                    <span class="muted" title="not evaluated yet">
                      —
                    </span>
                  )}
                </td>
                {manage && (
                  <td>
                    <div class="row-actions">
                      <RowButton class="alert-edit" name={`Edit rule ${r.name}`} onClick={() => setDialog(r)}>
                        Edit
                      </RowButton>
                      <RowButton class="alert-toggle" name={`${r.enabled ? "Disable" : "Enable"} rule ${r.name}`} disabled={busy === r.name} onClick={() => toggle(r)}>
                        {r.enabled ? "Disable" : "Enable"}
                      </RowButton>
                      <RowButton class="alert-delete" danger name={`Delete rule ${r.name}`} onClick={() => setDeleting(r)}>
                        Delete
                      </RowButton>
                    </div>
                  </td>
                )}
              </tr>
            );
          })}
        </Table>
      )}
      {manage && (
        <AlertDialog
          target={dialog}
          onClose={() => setDialog(null)}
          onSaved={(r, created) => {
            setNotice(`Rule ${r.name} ${created ? "created" : "saved"}.`);
            setDialog(null);
            list.reload();
          }}
        />
      )}
      {manage && (
        <ConfirmOn
          item={deleting}
          title="Delete alert rule"
          confirmLabel="Delete"
          danger
          onClose={() => setDeleting(null)}
          onConfirm={async (r) => {
            await del(alertPath(r.name));
            setNotice(`Rule ${r.name} deleted.`);
            list.reload();
          }}
        >
          <p>
            Delete the rule <strong class="mono">{deleting?.name}</strong>? Each queue it fires on resolves.
          </p>
        </ConfirmOn>
      )}
    </Screen>
  );
}

/** FiringCard is the dashboard's card of the rules firing; nothing for a key that may not read them. */
export function FiringCard() {
  const list = useApi<AlertRuleList>("/api/v1/alerts");
  useInterval(list.reload, ALERT_REFRESH_MS);
  return <FiringCardView list={list} />;
}

function FiringCardView({ list }: { list: Loaded<AlertRuleList> }) {
  if (isForbidden(list.error)) return null;
  const firing = list.data ? firingRules(list.data.alerts ?? []) : [];
  return (
    <section class="card" aria-labelledby="dash-alerts-h" id="dash-alerts" data-firing={firing.length}>
      <div class="dash-head">
        <h2 id="dash-alerts-h">
          Alerts <span class="muted dash-sub">({list.data ? `${firing.length} firing` : "…"})</span>
        </h2>
        <Link href="/alerts" class="dash-more">
          Rules →
        </Link>
      </div>
      <ErrorBox error={list.error} />
      {!list.data && !list.error && <Loading />}
      {list.data && firing.length === 0 && <Empty>No rule is firing.</Empty>}
      {firing.length > 0 && (
        <ul class="dash-alerts">
          {firing.map((r) => (
            <li key={r.name} data-alert={r.name}>
              <Badge class="alert-state alert-firing" glyph="▲">
                {r.name}
              </Badge>{" "}
              <span class="muted">
                {(r.firing ?? []).map((f) => f.queue).join(", ")} · since <Time at={r.since} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
