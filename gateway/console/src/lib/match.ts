// How the console's filter boxes match: by a part of any of the fields
// they name, in any case.

/** contains reports whether any of values holds query (trimmed, any case); an empty query matches everything. */
export function contains(query: string, ...values: (string | null | undefined)[]): boolean {
  const q = query.trim().toLowerCase();
  return !q || values.some((v) => !!v && v.toLowerCase().includes(q));
}
