// A collapsible, keyboard-operable JSON viewer for payloads, results and
// checkpoints: nested <details>/<summary> (native keyboard toggling), deep
// or big values collapsed and paged so a 1 MB payload renders quickly, a
// raw view and a copy button.
import { useState } from "preact/hooks";
import "./json.css";

/** OPEN_DEPTH: nodes shallower than this start expanded. */
export const OPEN_DEPTH = 2;
/** PAGE: entries of an object or array shown before "show more". */
export const PAGE = 50;
/** LONG_STRING: characters of a string shown before "show all". */
export const LONG_STRING = 300;

export type JsonKind = "object" | "array" | "string" | "number" | "boolean" | "null";

export function kindOf(v: unknown): JsonKind {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "object":
      return "object";
    case "string":
      return "string";
    case "number":
    case "bigint":
      return "number";
    case "boolean":
      return "boolean";
  }
  return "string";
}

/** sizeOf is the number of entries of an object or array (0 for others). */
export function sizeOf(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v && typeof v === "object") return Object.keys(v).length;
  return 0;
}

/** summary describes a container collapsed: "{3 keys}", "[1 item]", "{}". */
export function summary(v: unknown): string {
  const n = sizeOf(v);
  if (Array.isArray(v)) return n === 0 ? "[]" : `[${n} ${n === 1 ? "item" : "items"}]`;
  return n === 0 ? "{}" : `{${n} ${n === 1 ? "key" : "keys"}}`;
}

/** startsOpen: a container is expanded at first when it is shallower than OPEN_DEPTH. */
export function startsOpen(depth: number): boolean {
  return depth < OPEN_DEPTH;
}

/** entries lists a container's first `shown` entries as [label, value]. */
export function entries(v: unknown, shown: number): [string, unknown][] {
  if (Array.isArray(v)) return v.slice(0, shown).map((x, i) => [String(i), x]);
  if (v && typeof v === "object") {
    const out: [string, unknown][] = [];
    for (const k in v as Record<string, unknown>) {
      if (out.length >= shown) break;
      if (Object.prototype.hasOwnProperty.call(v, k)) out.push([k, (v as Record<string, unknown>)[k]]);
    }
    return out;
  }
  return [];
}

/** nextShown is how many entries "show more" reveals: another PAGE, at most all. */
export function nextShown(shown: number, size: number): number {
  return Math.min(size, shown + PAGE);
}

/** primitive writes a scalar as JSON writes it (strings quoted and escaped). */
export function primitive(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  return String(v);
}

/** pretty is the raw view's text; undefined (no value) reads "null". */
export function pretty(v: unknown): string {
  return JSON.stringify(v === undefined ? null : v, null, 2);
}

/** parseJSON reads raw JSON, or answers the text itself when it is not JSON. */
export function parseJSON(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** copyText puts text on the clipboard (navigator.clipboard, else a hidden textarea where it is unavailable). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.className = "json-copy-buffer";
  document.body.appendChild(ta);
  ta.select();
  const ok = document.execCommand("copy");
  ta.remove();
  if (!ok) throw new Error("the browser refused to copy");
}

/** JsonView shows a JSON value as a tree, with a raw view and a copy button. */
export function JsonView(props: { value: unknown; label: string; id?: string; empty?: string }) {
  const [raw, setRaw] = useState(false);
  const [copied, setCopied] = useState<string>("");
  const v = props.value;
  if (v === undefined || v === null) {
    return (
      <div class="json" id={props.id}>
        <span class="json-null">{props.empty ?? "null"}</span>
      </div>
    );
  }
  const text = () => pretty(v);
  return (
    <div class="json" id={props.id}>
      <div class="json-toolbar">
        <button type="button" class="json-raw" aria-pressed={raw} onClick={() => setRaw(!raw)} aria-label={(raw ? "Show the tree of " : "Show raw ") + props.label}>
          {raw ? "Tree" : "Raw"}
        </button>
        <button
          type="button"
          class="json-copy"
          aria-label={"Copy " + props.label}
          onClick={() =>
            copyText(text()).then(
              () => setCopied("Copied"),
              (e: Error) => setCopied("Copy failed: " + e.message),
            )
          }
        >
          Copy
        </button>
        <span class="muted json-status" role="status">
          {copied}
        </span>
      </div>
      {raw ? (
        <pre class="json-rawtext" tabIndex={0} aria-label={props.label}>
          {text()}
        </pre>
      ) : (
        <div class="json-tree" aria-label={props.label} role="group">
          <Value value={v} depth={0} />
        </div>
      )}
    </div>
  );
}

function Value({ value, depth, name }: { value: unknown; depth: number; name?: string }) {
  const k = kindOf(value);
  if (k === "object" || k === "array") return <Container value={value} depth={depth} name={name} />;
  return (
    <div class="json-row">
      {name !== undefined && <Key name={name} />}
      {k === "string" ? <Str s={value as string} /> : <span class={"json-" + k}>{primitive(value)}</span>}
    </div>
  );
}

function Key({ name }: { name: string }) {
  return <span class="json-key">{name}: </span>;
}

function Str({ s }: { s: string }) {
  const [all, setAll] = useState(false);
  if (s.length <= LONG_STRING || all) return <span class="json-string">{primitive(s)}</span>;
  return (
    <span class="json-string">
      {primitive(s.slice(0, LONG_STRING))}…{" "}
      <button type="button" class="link json-more" onClick={() => setAll(true)}>
        show all {s.length.toLocaleString("en-US")} characters
      </button>
    </span>
  );
}

function Container({ value, depth, name }: { value: unknown; depth: number; name?: string }) {
  const [open, setOpen] = useState(startsOpen(depth));
  const [shown, setShown] = useState(PAGE);
  const size = sizeOf(value);
  const arr = Array.isArray(value);
  if (size === 0) {
    return (
      <div class="json-row">
        {name !== undefined && <Key name={name} />}
        <span class="json-punct">{arr ? "[]" : "{}"}</span>
      </div>
    );
  }
  return (
    <details class="json-node" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {name !== undefined && <Key name={name} />}
        <span class="json-punct">{summary(value)}</span>
      </summary>
      {/* Children render only while open, so a huge collapsed value costs nothing. */}
      {open && (
        <div class="json-children">
          {entries(value, shown).map(([k, v]) => (
            <Value key={k} name={k} value={v} depth={depth + 1} />
          ))}
          {shown < size && (
            <div class="json-row">
              <button type="button" class="link json-more" onClick={() => setShown(nextShown(shown, size))}>
                show more ({(size - shown).toLocaleString("en-US")} of {size.toLocaleString("en-US")} not shown)
              </button>{" "}
              <button type="button" class="link json-more" onClick={() => setShown(size)}>
                show all
              </button>
            </div>
          )}
        </div>
      )}
    </details>
  );
}
