// A queue's detail: its status, rate, limits, counts per state (each a
// link that filters the job search below), description, job defaults and
// delivery (pull, or push with its settings and why it is disabled); its
// history charts; pause, resume, drain, clear and delete; the settings
// dialogs; then the search panel fixed to the queue. Reloads on this
// queue's job events.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { del, enc, isNotFound, post } from "../api";
import { Confirm, Dialog, ErrorBox, Field, KV, Notice, Screen, Stat, Time, num, useAsync } from "../components/ui";
import { FormFooter } from "../components/forms";
import { counted, exact, plural } from "../lib/format";
import { JobSearch } from "../components/search";
import { useApi, useLiveReload } from "../hooks";
import { Link, navigate, useLocation } from "../router";
import { useSession } from "../session";
import {
  clearable,
  DEFAULT_FIELDS,
  formatRate,
  formatKeyConcurrency,
  formatPushMode,
  formatThrottle,
  queueHref,
  STATES,
  totalJobs,
  type Queue,
  type QueueDefaults,
  type QueuePush,
} from "./queue-lib";
import { QueueHistory } from "./queue-history";
import { PushBadge, QueueAge, QueueStatusBadge, Sparkline, useLoadedAt } from "./queue-parts";
import { putChange, SettingsDialogs, type SettingsDialog } from "./queue-settings";
import "./queues.css";

interface DrainAnswer {
  active: number;
  drained: boolean;
}

export function QueueDetail({ name }: { name: string }) {
  const { can } = useSession();
  const manage = can("queue.manage");
  const loc = useLocation();
  const res = useApi<Queue>("/api/v1/queues/" + enc(name));
  useLiveReload(res.reload, (e) => e.queue === name);
  // A change's own answer shows at once; the next read replaces it.
  const [fresh, setFresh] = useState<Queue | null>(null);
  useEffect(() => setFresh(null), [res.data]);
  const q = fresh ?? res.data;
  const loadedAt = useLoadedAt(q);

  const [dialog, setDialog] = useState<SettingsDialog | "clear" | "delete" | null>(null);
  const [notice, setNotice] = useState("");
  const act = useAsync();
  const saved = (next: Queue) => {
    setFresh(next);
    res.reload();
  };
  const run = (label: string, fn: () => Promise<string | void>) => {
    setNotice("");
    return act.run(async () => {
      const msg = await fn();
      setNotice(msg ?? "");
      res.reload();
    }).then((ok) => {
      if (!ok) act.setError((e) => e && new Error(`${label}: ${e.message}`));
    });
  };

  const missing = isNotFound(res.error);
  const ready = q !== undefined || res.error !== undefined;
  const base = queueHref(name);
  const curState = loc.query.get("state") ?? "";

  if (!q) {
    return (
      <Screen name="queue" title={"Queue " + name} ready={ready}>
        {missing ? (
          <div id="queue-not-found">
            <ErrorBox error={`Queue “${name}” was not found in this namespace.`} />
            <Link href="/queues">All queues</Link>
          </div>
        ) : (
          <ErrorBox error={res.error} />
        )}
      </Screen>
    );
  }

  const actions = manage && (
    <>
      {q.paused ? (
        <button type="button" id="queue-resume" disabled={act.busy} onClick={() => run("Resume", () => post(`/api/v1/queues/${enc(name)}/resume`).then(() => "Resumed: workers get its jobs again."))}>
          ▶ Resume
        </button>
      ) : (
        <button type="button" id="queue-pause" disabled={act.busy} onClick={() => run("Pause", () => post(`/api/v1/queues/${enc(name)}/pause`).then(() => "Paused: workers get no job from it; enqueue goes on."))}>
          ‖ Pause
        </button>
      )}
      {!q.draining && (
        <button
          type="button"
          id="queue-drain"
          disabled={act.busy}
          title="Pause, and let the active jobs finish"
          onClick={() =>
            run("Drain", async () => {
              const d = await post<DrainAnswer>(`/api/v1/queues/${enc(name)}/drain`);
              return d.drained ? "Drained: paused, and no job is active." : `Draining: paused; ${num(d.active)} active ${plural(d.active, "job")} still running.`;
            })
          }
        >
          ↓ Drain
        </button>
      )}
      <button type="button" id="queue-clear" disabled={act.busy} onClick={() => setDialog("clear")}>
        Clear…
      </button>
      <button type="button" id="queue-delete" class="danger" disabled={act.busy} onClick={() => setDialog("delete")}>
        Delete queue…
      </button>
    </>
  );

  return (
    <Screen name="queue" title={"Queue: " + name} ready={ready} actions={actions}>
      <ErrorBox error={act.error} />
      <Notice id="queue-notice">{notice}</Notice>
      {res.error && <ErrorBox error={res.error} />}
      <div class="card">
        <div class="stats queue-stats">
          <Stat
            id="queue-status"
            value={
              <>
                <QueueStatusBadge q={q} /> <PushBadge q={q} />
              </>
            }
            label={"Status" + (q.draining && !q.drained ? ` · ${num(q.counts.active)} active` : "")} />
          <Stat
            id="queue-throughput"
            value={
              <>
                {formatRate(q.throughput)} <Sparkline values={q.throughput_per_minute} />
              </>
            }
            label="Throughput (last 5 min)"
          />
          <Setting id="queue-concurrency-value" label="Concurrency" value={q.concurrency === null ? "no limit" : num(q.concurrency)}>
            {manage && (
              <button type="button" class="link" id="queue-concurrency" aria-label="Edit concurrency" onClick={() => setDialog("concurrency")}>
                Edit
              </button>
            )}
          </Setting>
          <Setting id="queue-key-concurrency-value" label="Per concurrency key" value={formatKeyConcurrency(q.key_concurrency)}>
            {manage && (
              <button type="button" class="link" id="queue-key-concurrency" aria-label="Edit concurrency per key" onClick={() => setDialog("key-concurrency")}>
                Edit
              </button>
            )}
          </Setting>
          <Setting id="queue-throttle-value" label="Rate limit" value={formatThrottle(q.throttle)}>
            {manage && (
              <button type="button" class="link" id="queue-throttle" aria-label="Edit rate limit" onClick={() => setDialog("throttle")}>
                Edit
              </button>
            )}
          </Setting>
          <Stat id="queue-oldest" value={<QueueAge q={q} loadedAt={loadedAt} />} label="Oldest pending" />
        </div>
      </div>

      <nav class="card queue-counts" aria-label="Jobs by state" id="queue-counts">
        <Link href={base} class="count" aria-current={curState === "" ? "true" : undefined} data-state="">
          <span class="v">{num(totalJobs(q.counts))}</span>
          <span class="k">all</span>
        </Link>
        {STATES.map((s) => (
          <Link
            key={s}
            href={queueHref(name, s)}
            class={"count count-" + s}
            data-state={s}
            aria-current={curState === s ? "true" : undefined}
            aria-label={`${s}: ${exact(q.counts[s])}, show these jobs`}
          >
            <span class="v">{num(q.counts[s])}</span>
            <span class="k">{s}</span>
          </Link>
        ))}
      </nav>

      <QueueHistory name={name} />

      <div class="grid">
        <div class="card">
          <div class="card-head">
            <h2>Description</h2>
            {manage && (
              <button type="button" class="link" id="queue-description" aria-label="Edit description" onClick={() => setDialog("description")}>
                Edit
              </button>
            )}
          </div>
          <p id="queue-description-text" class={q.description ? "queue-description" : "muted"}>
            {q.description || "No description."}
          </p>
        </div>
        <div class="card">
          <div class="card-head">
            <h2>Job defaults</h2>
            {manage && (
              <button type="button" class="link" id="queue-defaults" aria-label="Edit job defaults" onClick={() => setDialog("defaults")}>
                Edit
              </button>
            )}
          </div>
          <Defaults d={q.defaults} />
        </div>
        <div class="card" id="queue-delivery">
          <div class="card-head">
            <h2>Delivery</h2>
            {manage && (
              <button type="button" class="link" id="queue-push" aria-label="Edit push delivery" onClick={() => setDialog("push")}>
                Edit
              </button>
            )}
          </div>
          <Delivery p={q.push ?? null} />
          {manage && q.push?.disabled && (
            <button
              type="button"
              id="queue-push-enable"
              disabled={act.busy}
              onClick={() => run("Enable push", () => putChange(q, {}).then(() => "Push enabled again: its jobs go to the handler."))}
            >
              Enable push again
            </button>
          )}
        </div>
      </div>

      {manage && (
        <>
          <SettingsDialogs q={q} open={dialog === "clear" || dialog === "delete" ? null : dialog} onClose={() => setDialog(null)} onSaved={saved} />
          <Confirm
            open={dialog === "clear"}
            title={"Clear queue " + name}
            confirmLabel={`Delete ${counted(clearable(q.counts), "job")}`}
            danger
            onClose={() => setDialog(null)}
            onConfirm={async () => {
              setNotice("");
              const r = await post<{ cleared: number }>(`/api/v1/queues/${enc(name)}/clear`);
              setNotice(`Cleared ${counted(r.cleared, "job")}.`);
              res.reload();
            }}
          >
            <ClearText q={q} />
          </Confirm>
          <DeleteQueueDialog q={q} open={dialog === "delete"} onClose={() => setDialog(null)} />
        </>
      )}

      <JobSearch fixed={{ queue: name }} />
    </Screen>
  );
}

/** Setting is a stat with its Edit button (for who may change it). */
function Setting(props: { id: string; label: string; value: string; children?: ComponentChildren }) {
  return (
    <Stat
      id={props.id}
      value={props.value}
      label={
        <>
          {props.label} {props.children}
        </>
      }
    />
  );
}

const defaultNames: Record<keyof QueueDefaults, string> = {
  max_retries: "Max retries",
  retry_backoff: "Retry backoff",
  retry_base_delay: "Retry base delay",
  retry_max_delay: "Retry max delay",
  lease_duration: "Lease duration",
  expire_after: "Expire after",
  retention: "Retention",
};

function Defaults({ d }: { d: QueueDefaults | null }) {
  const set = DEFAULT_FIELDS.filter((k) => d && d[k] !== null && d[k] !== undefined);
  if (!d || set.length === 0) return <p class="muted">None: jobs get the namespace's and the server's defaults.</p>;
  return (
    <dl class="kv" id="queue-defaults-list">
      {DEFAULT_FIELDS.map((k) => (
        <KV key={k} k={defaultNames[k]} data-field={k}>
          {d[k] === null || d[k] === undefined ? <span class="muted">—</span> : String(d[k])}
        </KV>
      ))}
    </dl>
  );
}

/** Delivery shows how the queue's jobs reach their handler: fetched by workers, or pushed by these settings (header
 * values stay hidden: they often hold a credential). */
function Delivery({ p }: { p: QueuePush | null }) {
  if (!p) return <p class="muted" id="queue-delivery-pull">Pull: workers fetch its jobs.</p>;
  const headers = Object.keys(p.headers).sort();
  return (
    <>
      {p.disabled && (
        <div class="notice notice-warn" id="queue-push-disabled" role="status">
          <strong>Push disabled</strong> <Time at={p.disabled.at} />: {p.disabled.reason}. Its jobs
          wait for pull workers until push is enabled again (saving the push settings does it too).
        </div>
      )}
      <dl class="kv" id="queue-push-settings">
        <KV k="URL" data-field="url">
          <code>{p.url}</code>
        </KV>
        <KV k="Mode" data-field="mode">
          {p.mode} <span class="muted">({formatPushMode(p.mode)})</span>
        </KV>
        <KV k="Timeout" data-field="timeout">
          {p.timeout}
        </KV>
        <KV k="Max in flight" data-field="max_in_flight">
          {num(p.max_in_flight)}
        </KV>
        <KV k="Headers" data-field="headers">
          {headers.length ? headers.join(", ") : <span class="muted">none</span>}
        </KV>
      </dl>
    </>
  );
}

/** ClearText says exactly what a clear removes, from the counts as last read. */
function ClearText({ q }: { q: Queue }) {
  const c = q.counts;
  const n = clearable(c);
  return (
    <div id="clear-text">
      <p>
        This deletes <strong>{exact(n)}</strong> {plural(n, "job")} waiting to run: {exact(c.pending)} pending, {exact(c.scheduled)} scheduled and{" "}
        {exact(c.retrying)} retrying (as last read; jobs enqueued meanwhile go too).
      </p>
      <p class="muted">
        Active jobs keep running; completed, dead, cancelled and held jobs stay. A deleted job counts as failed for its batch, and jobs that depend on it are
        cancelled. This cannot be undone.
      </p>
    </div>
  );
}

/** DeleteQueueDialog deletes the queue with all its jobs and settings once its name is typed. */
function DeleteQueueDialog({ q, open, onClose }: { q: Queue; open: boolean; onClose: () => void }) {
  return (
    <Dialog id="delete-queue-dialog" open={open} title={"Delete queue " + q.name} onClose={onClose}>
      <DeleteQueueForm q={q} onClose={onClose} />
    </Dialog>
  );
}

function DeleteQueueForm({ q, onClose }: { q: Queue; onClose: () => void }) {
  const [typedName, setTypedName] = useState("");
  const a = useAsync();
  const total = totalJobs(q.counts);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        a.run(async () => {
          await del(`/api/v1/queues/${enc(q.name)}?confirm=true`);
          onClose();
          navigate("/queues");
        });
      }}
    >
      <p>
        This deletes the queue’s settings (pause, limits, defaults, description) and all its <strong>{exact(total)}</strong> jobs, in every state —
        active ones too: their workers can no longer ack them. Jobs that depend on a deleted job are cancelled. A job enqueued to this name later starts a
        new queue with default settings. This cannot be undone.
      </p>
      <Field label="Type the queue’s name to confirm" for="delete-queue-name">
        <input id="delete-queue-name" autoComplete="off" spellcheck={false} value={typedName} onInput={(e) => setTypedName(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={a.error} />
      <FormFooter id="delete-queue-ok" danger busy={a.busy} disabled={typedName !== q.name} onCancel={onClose} label={`Delete queue and ${counted(total, "job")}`} />
    </form>
  );
}
