// Verification of Jobbie's signed requests (push deliveries and
// webhooks) per Standard Webhooks v1: "v1" HMAC-SHA256 with a whsec_
// secret, "v1a" Ed25519 with a whpk_ public key, over
// "{webhook-id}.{webhook-timestamp}.{body}", with WebCrypto only.

/** Thrown by verify: the request must not be trusted. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(`jobbie: webhook not verified: ${message}`);
    this.name = "WebhookVerificationError";
  }
}

/** How far webhook-timestamp may be from the clock, either way: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
const MAX_SIGNATURES = 8;

function b64(s: string): Uint8Array<ArrayBuffer> | null {
  try {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? "";
  const rec = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v.join(",") : v ?? "";
}

/**
 * Checks requests against trusted keys: Ed25519 public keys as published
 * ("whpk_<base64>", GET /api/v1/signing-keys) and shared secrets
 * ("whsec_<base64>"). During a key rotation, trust both keys.
 */
export class WebhookVerifier {
  private readonly hmacKeys: Promise<CryptoKey[]>;
  private readonly edKeys: Promise<CryptoKey[]>;
  /** Seconds webhook-timestamp may be from now. */
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS;
  /** The clock, in ms; tests set it. */
  now: () => number = () => Date.now();

  constructor(keys: string[]) {
    if (keys.length === 0) throw new TypeError("jobbie: webhook verifier: no keys");
    const secrets: Uint8Array<ArrayBuffer>[] = [];
    const pubs: Uint8Array<ArrayBuffer>[] = [];
    keys.forEach((k, i) => {
      if (k.startsWith("whpk_")) {
        const b = b64(k.slice(5));
        if (!b || b.length !== 32) throw new TypeError(`jobbie: webhook verifier: key ${i} is not a base64 Ed25519 public key`);
        pubs.push(b);
      } else if (k.startsWith("whsec_")) {
        const b = b64(k.slice(6));
        if (!b || b.length < 24) throw new TypeError(`jobbie: webhook verifier: key ${i} is not a base64 secret of at least 24 bytes`);
        secrets.push(b);
      } else {
        throw new TypeError(`jobbie: webhook verifier: key ${i} starts with neither whpk_ nor whsec_`);
      }
    });
    const subtle = globalThis.crypto.subtle;
    this.hmacKeys = Promise.all(secrets.map((s) => subtle.importKey("raw", s, { name: "HMAC", hash: "SHA-256" }, false, ["verify"])));
    this.edKeys = Promise.all(pubs.map((p) => subtle.importKey("raw", p, { name: "Ed25519" }, false, ["verify"])));
  }

  /**
   * Resolves if the timestamp is within the tolerance and a signature was
   * made by a trusted key over the exact body received (verify the raw
   * bytes; do not decode and re-encode the JSON first); rejects with
   * WebhookVerificationError otherwise.
   */
  async verify(headers: HeaderSource, body: string | Uint8Array): Promise<void> {
    const id = header(headers, "webhook-id");
    const ts = header(headers, "webhook-timestamp");
    const sigs = header(headers, "webhook-signature");
    if (!id || !ts || !sigs) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
    if (!/^\d+$/.test(ts)) throw new WebhookVerificationError(`webhook-timestamp ${JSON.stringify(ts)} is not a number of seconds`);
    const now = Math.floor(this.now() / 1000);
    if (Math.abs(now - Number(ts)) > this.toleranceSeconds) {
      throw new WebhookVerificationError(`webhook-timestamp ${ts} is more than ${this.toleranceSeconds}s from now (${now})`);
    }
    const te = new TextEncoder();
    const bodyBytes = typeof body === "string" ? te.encode(body) : body;
    const prefix = te.encode(`${id}.${ts}.`);
    const content = new Uint8Array(prefix.length + bodyBytes.length);
    content.set(prefix);
    content.set(bodyBytes, prefix.length);
    const subtle = globalThis.crypto.subtle;
    const [hmacKeys, edKeys] = await Promise.all([this.hmacKeys, this.edKeys]);
    for (const f of sigs.split(/\s+/).filter(Boolean).slice(0, MAX_SIGNATURES)) {
      const comma = f.indexOf(",");
      if (comma < 0) continue;
      const version = f.slice(0, comma);
      const sig = b64(f.slice(comma + 1));
      if (!sig) continue;
      const keys = version === "v1" ? hmacKeys : version === "v1a" ? edKeys : [];
      const alg = version === "v1" ? "HMAC" : "Ed25519";
      for (const k of keys) {
        if (await subtle.verify(alg, k, sig, content)) return; // HMAC verify compares in constant time
      }
    }
    throw new WebhookVerificationError("no signature matches a trusted key");
  }
}

/** Verifies one request against keys (see WebhookVerifier). */
export async function verifyWebhook(headers: HeaderSource, body: string | Uint8Array, keys: string[],
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): Promise<void> {
  const v = new WebhookVerifier(keys);
  v.toleranceSeconds = toleranceSeconds;
  await v.verify(headers, body);
}
