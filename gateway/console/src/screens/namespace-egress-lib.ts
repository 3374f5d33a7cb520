// A namespace's egress allow-list as the API shows it
// (wire.NamespaceEgress) and the editor's rows: what is sent, and which
// row a 400's field (egress_allow[i], an index into what was sent) names.

export interface NamespaceEgress {
  egress_allow: string[];
}

/** MAX_EGRESS_ALLOW is the API's limit on a list's entries (outbound.MaxAllowList). */
export const MAX_EGRESS_ALLOW = 64;

/** egressPath is the API path of namespace ns's egress allow-list. */
export function egressPath(ns: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(ns)}/egress`;
}

/**
 * egressEntries is what the editor's rows send: each row trimmed, blank
 * rows left out (an empty list is none: null). rowOf maps an index of
 * allow back to its row, so a 400 on egress_allow[i] marks the row typed.
 */
export function egressEntries(rows: string[]): { body: { egress_allow: string[] | null }; rowOf: number[] } {
  const allow: string[] = [];
  const rowOf: number[] = [];
  rows.forEach((r, i) => {
    const t = r.trim();
    if (!t) return;
    allow.push(t);
    rowOf.push(i);
  });
  return { body: { egress_allow: allow.length ? allow : null }, rowOf };
}

/**
 * badRow is the row a 400's field names: egress_allow[i] is the row
 * rowOf[i]; -1 for a field that names no entry (egress_allow itself, or
 * none).
 */
export function badRow(field: string | undefined, rowOf: number[]): number {
  const m = /^egress_allow\[(\d+)\]$/.exec(field ?? "");
  if (!m) return -1;
  const row = rowOf[Number(m[1])];
  return row === undefined ? -1 : row;
}

/** egressRows is the list as the editor's rows: one empty row for none, so there is a field to type in. */
export function egressRows(allow: string[] | undefined): string[] {
  return allow && allow.length ? [...allow] : [""];
}

/**
 * rowError is a 400's message about one entry as its row shows it: the
 * API names the entry by its place in what was sent (egress_allow[1]),
 * which is not its row once blank rows are left out, so the row says
 * only what is wrong with the entry it holds.
 */
export function rowError(message: string): string {
  return message.replace(/^egress_allow\[\d+\] \((".*?")\) /, "$1 ");
}
