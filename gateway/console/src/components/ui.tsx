// Small building blocks every screen uses.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

/** Screen is a screen's root: data-screen names it, data-ready says its first data arrived (tests wait on it). */
export function Screen(props: {
  name: string;
  title: ComponentChildren;
  ready: boolean;
  actions?: ComponentChildren;
  children?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = (typeof props.title === "string" ? props.title + " · " : "") + "Jobbie console";
  }, [props.title]);
  return (
    <section class="screen" data-screen={props.name} data-ready={props.ready ? "true" : "false"} aria-busy={!props.ready}>
      <header class="screen-head">
        <h1>{props.title}</h1>
        {props.actions && <div class="actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/** ErrorBox shows an API error (role=alert); further attributes (an id) go to its <div>. */
export function ErrorBox({ error, ...rest }: { error?: Error | string | null } & JSX.HTMLAttributes<HTMLDivElement>) {
  if (!error) return null;
  const msg = typeof error === "string" ? error : error.message;
  return (
    <div {...rest} class="error" role="alert">
      {msg}
    </div>
  );
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}

/** Unloaded is a detail screen before its data: Loading, or the error that stopped it (then it is ready). */
export function Unloaded(props: { name: string; title: string; error?: Error }) {
  return (
    <Screen name={props.name} title={props.title} ready={!!props.error}>
      {props.error ? <ErrorBox error={props.error} /> : <Loading />}
    </Screen>
  );
}

/** Missing is a detail screen whose object was not found: the message (an alert with id), then what else to say. */
export function Missing(props: { name: string; title: string; id: string; message: ComponentChildren; children?: ComponentChildren }) {
  return (
    <Screen name={props.name} title={props.title} ready={true}>
      <div class="error" id={props.id} role="alert">
        {props.message}
      </div>
      {props.children}
    </Screen>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Dialog is a modal <dialog>: focus stays inside, Escape closes. */
export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children?: ComponentChildren;
  footer?: ComponentChildren;
  id?: string;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Before paint: an emptied dialog must not stay open, catching clicks.
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      id={props.id}
      class={props.wide ? "wide" : undefined}
      aria-label={props.title}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      {props.open && (
        <div class="dialog-body">
          <h2>{props.title}</h2>
          {props.children}
          {props.footer && <div class="dialog-footer">{props.footer}</div>}
        </div>
      )}
    </dialog>
  );
}

type ConfirmProps = {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<unknown> | void;
  onClose: () => void;
  /** the dialog's id; one screen with two confirmations names them apart */
  id?: string;
};

/** Confirm asks before an action; onConfirm's error is shown in the dialog. */
export function Confirm(props: ConfirmProps) {
  const { busy, error, setError, run } = useAsync();
  useEffect(() => {
    if (props.open) setError(null);
  }, [props.open]);
  return (
    <Dialog
      open={props.open}
      title={props.title}
      onClose={props.onClose}
      id={props.id ?? "confirm-dialog"}
      footer={
        <>
          <button type="button" onClick={props.onClose} disabled={busy}>
            Cancel
          </button>
          <button
            type="button"
            id="confirm-ok"
            class={props.danger ? "danger" : "primary"}
            disabled={busy}
            onClick={() =>
              run(async () => {
                await props.onConfirm();
                props.onClose();
              })
            }
          >
            {props.confirmLabel}
          </button>
        </>
      }
    >
      {props.children}
      <ErrorBox error={error} />
    </Dialog>
  );
}

/** ConfirmOn asks before acting on one item (a row's): open while there is one (null: closed). */
export function ConfirmOn<T>({
  item,
  onConfirm,
  ...rest
}: Omit<ConfirmProps, "open" | "onConfirm"> & { item: T | null; onConfirm: (item: T) => Promise<unknown> | void }) {
  return <Confirm {...rest} open={item !== null} onConfirm={() => (item === null ? undefined : onConfirm(item))} />;
}

const stateGlyph: Record<string, string> = {
  pending: "◌",
  scheduled: "◷",
  active: "●",
  retrying: "↻",
  completed: "✓",
  dead: "✕",
  cancelled: "⊘",
  held: "‖",
};

/** StateBadge shows a job state with a glyph, so it does not rely on colour alone. */
export function StateBadge({ state }: { state: string }) {
  return (
    <Badge class={"state-" + state} glyph={stateGlyph[state] ?? "•"}>
      {state}
    </Badge>
  );
}

/** Badge is a badge whose glyph (hidden from screen readers: the text says it) shows what its colour does too; class is added to "badge". */
export function Badge({
  class: cls,
  glyph,
  children,
  ...rest
}: { class: string; glyph: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLSpanElement>, "class">) {
  return (
    <span {...rest} class={"badge " + cls}>
      <span aria-hidden="true">{glyph}</span> {children}
    </span>
  );
}

/** Meter is a .progress bar filled pct %, with the progressbar role (its aria-value* and name come with the attributes). */
export function Meter({ pct, class: cls, ...rest }: { pct: number; class?: string } & Omit<JSX.HTMLAttributes<HTMLDivElement>, "class">) {
  return (
    <div {...rest} class={cls ? "progress " + cls : "progress"} role="progressbar">
      <span style={{ width: pct + "%" }} />
    </div>
  );
}

/** Stat is one figure of a .stats row: its value over its label. */
export function Stat(props: { value: ComponentChildren; label: ComponentChildren; id?: string; stat?: string }) {
  return (
    <div class="stat" id={props.id} data-stat={props.stat}>
      <span class="v">{props.value}</span>
      <span class="k">{props.label}</span>
    </div>
  );
}

/** KV is one term of a dl.kv and its description (further attributes go to the <dd>). */
export function KV({ k, children, ...dd }: { k: ComponentChildren; children?: ComponentChildren } & JSX.HTMLAttributes<HTMLElement>) {
  return (
    <>
      <dt>{k}</dt>
      <dd {...dd}>{children}</dd>
    </>
  );
}

/** Notice shows what an action did (role=status); nothing while there is no message. */
export function Notice({ children, id }: { children?: ComponentChildren; id?: string }) {
  if (!children) return null;
  return (
    <div class="notice" role="status" id={id}>
      {children}
    </div>
  );
}

/** num writes 12,400 as 12.4k. */
export function num(n: number | undefined | null): string {
  if (n === undefined || n === null) return "—";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1).replace(/\.0$/, "") + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  return n.toLocaleString("en-US", { maximumFractionDigits: 1 });
}

/** ago writes a time as "2m ago" (or "in 5m"). */
export function ago(at: string | number | Date | null | undefined, now = Date.now()): string {
  if (at === null || at === undefined || at === "") return "—";
  const t = new Date(at).getTime();
  if (Number.isNaN(t)) return "—";
  const d = Math.round((now - t) / 1000);
  const a = Math.abs(d);
  const s = a < 60 ? a + "s" : a < 3600 ? Math.floor(a / 60) + "m" : a < 86400 ? Math.floor(a / 3600) + "h" : Math.floor(a / 86400) + "d";
  if (a < 2) return "now";
  return d >= 0 ? s + " ago" : "in " + s;
}

/** Time shows a relative time with the exact UTC time as its title. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time dateTime={at} title={new Date(at).toISOString()}>
      {ago(at)}
    </time>
  );
}

/** Field is a labelled form control (hintId: its hint's id, for the control's aria-describedby). */
export function Field(props: { label: string; children: ComponentChildren; hint?: string; hintId?: string; for?: string }) {
  return (
    <label class="field" for={props.for}>
      <span class="label">{props.label}</span>
      {props.children}
      {props.hint && (
        <span class="hint" id={props.hintId}>
          {props.hint}
        </span>
      )}
    </label>
  );
}

/** Pager moves through pages of a list (of pages pages, when known). */
export function Pager(props: { page: number; pages?: number; hasNext: boolean; onPage: (p: number) => void; label?: string }) {
  return (
    <nav class="pager" aria-label={props.label ?? "Pages"}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)} aria-label="Previous page">
        ◀
      </button>
      <span aria-current="page">
        Page {props.page}
        {props.pages !== undefined && <> of {props.pages}</>}
      </span>
      <button type="button" disabled={!props.hasNext} onClick={() => props.onPage(props.page + 1)} aria-label="Next page">
        ▶
      </button>
    </nav>
  );
}

/** useAsync runs one action at a time, with its error (at first, initialError). */
export function useAsync(initialError: Error | null = null) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(initialError);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(e as Error);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

export type InputEvent = JSX.TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
/** val reads an input event's value. */
export const val = (e: InputEvent) => e.currentTarget.value;
