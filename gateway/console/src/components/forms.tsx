// Parts of the console's forms: a dialog form's buttons, a dialog about
// one item, a select's choices and a list's filter box.
import type { ComponentChildren } from "preact";
import { Dialog } from "./ui";

/** FormFooter is a dialog form's buttons: extra ones, Cancel (held while busy), then submit (primary, or danger). */
export function FormFooter(props: {
  /** the submit button's id */
  id: string;
  label: ComponentChildren;
  onCancel: () => void;
  busy?: boolean;
  /** the submit button is disabled (busy disables it too) */
  disabled?: boolean;
  danger?: boolean;
  cancelLabel?: string;
  extra?: ComponentChildren;
}) {
  return (
    <div class="dialog-footer">
      {props.extra}
      <button type="button" onClick={props.onCancel} disabled={props.busy}>
        {props.cancelLabel ?? "Cancel"}
      </button>
      <button type="submit" id={props.id} class={props.danger ? "danger" : "primary"} disabled={props.busy || props.disabled}>
        {props.label}
      </button>
    </div>
  );
}

/**
 * ItemDialog is a dialog about one item, open while there is one (null:
 * closed). Its form mounts with each opening, so it starts from the item
 * as it is then, and closing forgets what was typed (a secret too).
 */
export function ItemDialog<T>(props: { item: T | null; id: string; title: string; wide?: boolean; onClose: () => void; children: (item: T) => ComponentChildren }) {
  return (
    <Dialog open={props.item !== null} id={props.id} title={props.title} onClose={props.onClose} wide={props.wide}>
      {props.item !== null && props.children(props.item)}
    </Dialog>
  );
}

/** A choice of a select: its value (shown as it is), or a value with its label. */
export type Choice = string | { value: string; label: ComponentChildren };

/** Options are a <select>'s choices, in order. */
export function Options({ choices }: { choices: readonly Choice[] }) {
  return (
    <>
      {choices.map((c) =>
        typeof c === "string" ? (
          <option key={c} value={c}>
            {c}
          </option>
        ) : (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ),
      )}
    </>
  );
}

/** FilterBox is a list's search box; label names it (for screen readers: the placeholder shows). */
export function FilterBox(props: { id: string; label: string; class: string; placeholder: string; value: string; onInput: (v: string) => void }) {
  return (
    <label class={props.class}>
      <span class="sr-only">{props.label}</span>
      <input
        id={props.id}
        type="search"
        placeholder={props.placeholder}
        aria-label={props.label}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}
