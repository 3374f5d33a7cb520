// Namespaces as the API shows them (wire/admin.go, wire/admin_namespaces.go)
// and the retention field's conversions between what people type ("7d")
// and the API's Go durations ("168h").

export interface Namespace {
  name: string;
  description: string;
  /** the API's duration ("168h"); absent when none is set */
  retention?: string;
  deletion_protection: boolean;
  created_at: string;
  /** the tenant's self-hosted shard it is on, when the API says (absent: hosted) */
  shard?: string;
}

export interface NamespaceList {
  namespaces: Namespace[];
}

const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** durationSeconds reads a Go duration ("1h30m", "168h") or a days/weeks form ("7d", "2w1d") as seconds, NaN when it is neither. */
export function durationSeconds(s: string): number {
  const t = s.trim();
  if (!t) return NaN;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w)/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(t))) {
    total += parseFloat(m[1]) * UNIT_SECONDS[m[2]];
    at = re.lastIndex;
  }
  return at === t.length && at > 0 ? total : NaN;
}

/**
 * retentionBody is a retention field for the API: null for an empty field
 * (no retention), a plain number of seconds as a number, a days or weeks
 * form as hours (Go durations have no days: "7d" is "168h"), anything else
 * as typed, for the server to judge.
 */
export function retentionBody(input: string): string | number | null {
  const t = input.trim();
  if (!t) return null;
  if (/^\d+$/.test(t)) return Number(t);
  if (/[dw]/.test(t)) {
    const secs = durationSeconds(t);
    if (!Number.isNaN(secs)) return goDuration(secs);
  }
  return t;
}

/** goDuration writes whole seconds as a Go duration ("168h", "1h30m", "90s"). */
export function goDuration(secs: number): string {
  const s = Math.round(secs);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  let out = "";
  if (h) out += h + "h";
  if (m) out += m + "m";
  if (r || !out) out += r + "s";
  return out;
}

/** retentionLabel writes the API's retention for people: "7 days", "36h", "—" for none. */
export function retentionLabel(retention: string | undefined): string {
  if (!retention) return "—";
  const secs = durationSeconds(retention);
  if (Number.isNaN(secs)) return retention;
  if (secs > 0 && secs % 86400 === 0) {
    const d = secs / 86400;
    return d === 1 ? "1 day" : `${d} days`;
  }
  return retention;
}

/** retentionInput is the API's retention as the edit field shows it: whole days as "7d". */
export function retentionInput(retention: string | undefined): string {
  if (!retention) return "";
  const secs = durationSeconds(retention);
  if (secs > 0 && secs % 86400 === 0) return secs / 86400 + "d";
  return retention;
}

const LABEL = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** namespaceNameError is why name cannot name a namespace (tenancy.ValidateNamespace), or "". */
export function namespaceNameError(name: string): string {
  return LABEL.test(name) ? "" : "1-63 lowercase letters, digits or '-', starting with a letter or digit";
}
