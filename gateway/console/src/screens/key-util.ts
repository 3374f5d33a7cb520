// API keys as the API shows them (wire/admin.go, wire/admin_keys.go) and
// the key dialog's conversions.

export interface Key {
  id: string;
  name: string;
  description: string;
  role: string;
  namespaces: string[];
  created_at: string;
  expires_at?: string;
  revoked_at?: string;
  last_used_at?: string;
  rotated_at?: string;
}

export interface KeyList {
  keys: Key[];
}

/** A new key with its secret (`key`), shown this once. */
export interface CreatedKey extends Key {
  key: string;
}

/** A rotated key with its new secret, and until when the old one works. */
export interface RotatedKey extends Key {
  key: string;
  previous_key_valid_until: string;
}

/** withoutSecret is a key as its list shows it: what a create or a rotation answered, its secret left out. */
export function withoutSecret<K extends Key & { key: string }>(k: K): Omit<K, "key"> {
  const { key: _secret, ...rest } = k;
  return rest;
}

export type KeyStatus = "active" | "revoked" | "expired";

export function keyStatus(k: Key, now = Date.now()): KeyStatus {
  if (k.revoked_at) return "revoked";
  if (k.expires_at && new Date(k.expires_at).getTime() <= now) return "expired";
  return "active";
}

/** The expiry choices of the key dialog. */
export const EXPIRY_PRESETS: { value: string; label: string; days?: number }[] = [
  { value: "never", label: "Never" },
  { value: "7d", label: "In 7 days", days: 7 },
  { value: "30d", label: "In 30 days", days: 30 },
  { value: "90d", label: "In 90 days", days: 90 },
  { value: "365d", label: "In a year", days: 365 },
  { value: "custom", label: "On a date…" },
];

/**
 * expiresAt is the request's expires_at for a preset (or "custom" with a
 * datetime-local value, read in the browser's time zone): RFC 3339 in UTC,
 * null for never. It throws on a custom value that is not a time.
 */
export function expiresAt(preset: string, custom: string, now = Date.now()): string | null {
  if (preset === "never") return null;
  if (preset === "custom") {
    const t = new Date(custom);
    if (!custom || Number.isNaN(t.getTime())) throw new Error("Pick the date and time the key expires.");
    return t.toISOString();
  }
  const p = EXPIRY_PRESETS.find((x) => x.value === preset);
  if (!p?.days) throw new Error(`unknown expiry ${preset}`);
  return new Date(now + p.days * 86400_000).toISOString();
}

/**
 * keyNamespaces is the request's namespaces: ["*"] for every namespace
 * (whose default is always "default"), else the chosen ones with the
 * default first (the server takes the first as the key's default).
 */
export function keyNamespaces(all: boolean, chosen: string[], dflt: string): string[] {
  if (all) return ["*"];
  const uniq = Array.from(new Set(chosen));
  if (dflt && uniq.includes(dflt)) return [dflt, ...uniq.filter((n) => n !== dflt)];
  return uniq;
}

/** The grace periods offered when rotating a key (wire.MaxGracePeriod is 7 days). */
export const GRACE_PRESETS: { value: string; label: string }[] = [
  { value: "0s", label: "None: the old secret stops at once" },
  { value: "5m", label: "5 minutes" },
  { value: "1h", label: "1 hour" },
  { value: "24h", label: "1 day" },
  { value: "168h", label: "7 days" },
];
