// An invoice's exact quantities: integers that may exceed 2^53, which
// JSON.parse would round, so they are read as the digits the API wrote.

/** EXACT_FIELDS are the invoice line's fields of any size. */
export const EXACT_FIELDS = ["quantity", "included_applied", "billable", "billed_units"];

/** parseExact parses an invoice's JSON with EXACT_FIELDS' numbers kept as strings of their digits. */
export function parseExact<T>(text: string): T {
  const re = new RegExp(`"(${EXACT_FIELDS.join("|")})"\\s*:\\s*(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`, "g");
  return JSON.parse(text.replace(re, '"$1":"$2"')) as T;
}

/** grouped writes an integer's digits with thousands separators: "12345678901234567890" → "12,345,678,901,234,567,890". */
export function grouped(digits: string | number): string {
  const s = String(digits);
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(s);
  if (!m) return s;
  return m[1] + m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (m[3] ?? "");
}
