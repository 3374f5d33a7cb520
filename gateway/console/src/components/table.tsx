// A data table as every list shows it (scrolling in its .table-wrap on a
// phone), its sortable column headers, and the parts lists of many rows
// share.
import { isValidElement, type ComponentChildren, type VNode } from "preact";
import { num } from "./ui";

/**
 * A column's header: its text; or its text with the column's traits
 * (hidden: for screen readers only); a <th> of its own (a SortHeader) as
 * it is; false leaves the column out.
 */
export type Column = string | false | null | undefined | VNode | { label: ComponentChildren; num?: boolean; title?: string; hidden?: boolean };

function header(c: Column, i: number) {
  if (!c) return null;
  if (isValidElement(c)) return c;
  if (typeof c === "string")
    return (
      <th key={i} scope="col">
        {c}
      </th>
    );
  return (
    <th key={i} scope="col" class={c.num ? "num" : undefined} title={c.title}>
      {c.hidden ? <span class="sr-only">{c.label}</span> : c.label}
    </th>
  );
}

/** Table is a table.data of one header row (cols) and the rows (children); caption names it for screen readers. */
export function Table(props: { id?: string; class?: string; caption?: string; cols: Column[]; children?: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class={props.class ? "data " + props.class : "data"} id={props.id}>
        {props.caption && <caption class="sr-only">{props.caption}</caption>}
        <thead>
          <tr>{props.cols.map(header)}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** SortHeader is a column header whose button sorts by the column: aria-sort says how it is sorted, a mark shows it (unsorted: that mark). */
export function SortHeader(props: {
  label: string;
  sorted: "asc" | "desc" | null;
  onSort: () => void;
  num?: boolean;
  /** the th's data-col */
  col?: string;
  /** the button's id and title */
  id?: string;
  title?: string;
  unsorted?: string;
}) {
  return (
    <th
      scope="col"
      class={props.num ? "num" : undefined}
      aria-sort={props.sorted ? (props.sorted === "asc" ? "ascending" : "descending") : "none"}
      data-col={props.col}
    >
      <button type="button" class="sort" id={props.id} onClick={props.onSort} title={props.title}>
        {props.label}
        <span aria-hidden="true" class="sort-mark">
          {props.sorted ? (props.sorted === "asc" ? " ▲" : " ▼") : (props.unsorted ?? "")}
        </span>
      </button>
    </th>
  );
}

/** RowButton is one of a row's actions: name is its accessible name (the action and the row's object), data its data-* attributes. */
export function RowButton(props: {
  name: string;
  onClick: () => void;
  danger?: boolean;
  class?: string;
  disabled?: boolean;
  data?: Record<`data-${string}`, string>;
  children: ComponentChildren;
}) {
  const cls = [props.class, props.danger && "danger"].filter(Boolean).join(" ");
  return (
    <button type="button" {...props.data} class={cls || undefined} aria-label={props.name} disabled={props.disabled} onClick={props.onClick}>
      {props.children}
    </button>
  );
}

/** EditDelete are a row's Edit and Delete buttons, named for the row's object (noun name); data-edit-<attr> and data-delete-<attr> hold its name. */
export function EditDelete(props: { noun: string; name: string; attr: string; onEdit: () => void; onDelete: () => void }) {
  return (
    <>
      <RowButton data={{ [`data-edit-${props.attr}`]: props.name }} name={`Edit ${props.noun} ${props.name}`} onClick={props.onEdit}>
        Edit
      </RowButton>
      <RowButton data={{ [`data-delete-${props.attr}`]: props.name }} name={`Delete ${props.noun} ${props.name}`} danger onClick={props.onDelete}>
        Delete
      </RowButton>
    </>
  );
}

/** NumCell is a right-aligned number cell that tests find by its column (data-col). */
export function NumCell(props: { col: string; class?: string; children: ComponentChildren }) {
  return (
    <td class={props.class ? "num " + props.class : "num"} data-col={props.col}>
      {props.children}
    </td>
  );
}

/** ShowAll toggles a long list between its first limit rows and all matched (shown only when there are more). */
export function ShowAll(props: { id: string; showAll: boolean; onToggle: (all: boolean) => void; matched: number; limit: number }) {
  if (props.matched <= props.limit) return null;
  return (
    <button type="button" id={props.id} class="link" onClick={() => props.onToggle(!props.showAll)}>
      {props.showAll ? `Show the first ${props.limit}` : `Show all ${num(props.matched)}`}
    </button>
  );
}
