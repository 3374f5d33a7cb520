import { describe, expect, it } from "vitest";
import { pushHandler, verifyWebhook, WebhookVerificationError, WebhookVerifier } from "../src/index.js";

// The vectors published with the Standard Webhooks reference libraries
// (as internal/whsign's tests use them).
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = "1614265330";
const BODY = '{"test": 2432232314}';
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const HMAC_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const ED_SEED = "VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk="; // whsk_…
const ED_SIG = "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==";

const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** The Ed25519 key of a 32-byte seed, and its public key as "whpk_…". */
async function edKey(seedB64: string): Promise<{ key: CryptoKey; pub: string }> {
  const pkcs8 = new Uint8Array([...unb64("MC4CAQAwBQYDK2VwBCIEIA=="), ...unb64(seedB64)]);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const pub = jwk.x!.replace(/-/g, "+").replace(/_/g, "/") + "=";
  return { key, pub: `whpk_${pub}` };
}

function at(ts: string): () => number {
  return () => Number(ts) * 1000;
}

function headers(id: string, ts: string, sig: string): Headers {
  return new Headers({ "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig });
}

describe("webhook verification", () => {
  it("verifies the specification's v1 (HMAC) and v1a (Ed25519) vectors", async () => {
    const { pub } = await edKey(ED_SEED);
    for (const [keys, sig] of [[[SECRET], HMAC_SIG], [[pub], ED_SIG], [[SECRET, pub], `${HMAC_SIG} ${ED_SIG}`]] as const) {
      const v = new WebhookVerifier([...keys]);
      v.now = at(TS);
      await expect(v.verify(headers(ID, TS, sig), BODY)).resolves.toBeUndefined();
      await expect(v.verify({ "Webhook-Id": ID, "Webhook-Timestamp": TS, "Webhook-Signature": sig }, new TextEncoder().encode(BODY)))
        .resolves.toBeUndefined();
    }
  });

  it("refuses a changed body, id or timestamp, a wrong key, and an old or future timestamp", async () => {
    const { pub } = await edKey(btoa("x".repeat(32)));
    const v = new WebhookVerifier([SECRET]);
    v.now = at(TS);
    await expect(v.verify(headers(ID, TS, HMAC_SIG), BODY.replace("2", "3"))).rejects.toThrow(/no signature matches/);
    await expect(v.verify(headers(ID + "x", TS, HMAC_SIG), BODY)).rejects.toThrow(WebhookVerificationError);
    const edOnly = new WebhookVerifier([pub]);
    edOnly.now = at(TS);
    await expect(edOnly.verify(headers(ID, TS, ED_SIG), BODY)).rejects.toThrow(/no signature matches/);
    await expect(edOnly.verify(headers(ID, TS, HMAC_SIG), BODY)).rejects.toThrow(/no signature matches/);
    v.now = () => (Number(TS) + 301) * 1000;
    await expect(v.verify(headers(ID, TS, HMAC_SIG), BODY)).rejects.toThrow(/more than 300s from now/);
    v.now = () => (Number(TS) - 301) * 1000;
    await expect(v.verify(headers(ID, TS, HMAC_SIG), BODY)).rejects.toThrow(/more than 300s from now/);
    await expect(verifyWebhook(headers(ID, "", HMAC_SIG), BODY, [SECRET])).rejects.toThrow(/missing/);
    await expect(verifyWebhook(headers(ID, TS, HMAC_SIG), BODY, [SECRET])).rejects.toThrow(/from now/); // the real clock
  });

  it("refuses keys that are not whpk_ or whsec_ of the right size", () => {
    expect(() => new WebhookVerifier([])).toThrow(/no keys/);
    expect(() => new WebhookVerifier(["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])).toThrow(/neither whpk_ nor whsec_/);
    expect(() => new WebhookVerifier([`whsec_${btoa("short")}`])).toThrow(/at least 24 bytes/);
    expect(() => new WebhookVerifier([`whpk_${btoa("x".repeat(31))}`])).toThrow(/Ed25519 public key/);
    expect(() => new WebhookVerifier(["whsec_!!!"])).toThrow(/secret/);
  });
});

describe("pushHandler", () => {
  async function signed(body: string, key: CryptoKey, ts = String(Math.floor(Date.now() / 1000))): Promise<Request> {
    const id = "job_1_1";
    const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", key, new TextEncoder().encode(`${id}.${ts}.${body}`)));
    return new Request("https://worker.example/jobs", { method: "POST", body, headers: headers(id, ts, `v1a,${b64(sig)}`) });
  }
  const delivery = JSON.stringify({ job_id: "job_1", queue: "q", payload: { n: 2 }, attempt: 2, max_retries: 3, tags: {}, checkpoint: { page: 1 }, timeout: 30 });

  it("verifies, runs the handler and answers its result, checkpoint and progress", async () => {
    const { key, pub } = await edKey(btoa("k".repeat(32)));
    const h = pushHandler(new WebhookVerifier([pub]), async (job) => {
      expect(job).toMatchObject({ id: "job_1", queue: "q", attempt: 2, lastCheckpoint: { page: 1 }, leaseDurationMs: 30_000 });
      job.progress(1, 2);
      await job.checkpoint({ page: 2 });
      return { doubled: (job.payload as { n: number }).n * 2 };
    });
    const res = await h(await signed(delivery, key));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: { doubled: 4 }, checkpoint: { page: 2 }, progress: { current: 1, total: 2 } });
  });

  it("answers 500 with the error and its stack, 401 unsigned, 400 not a delivery, 405 not a POST", async () => {
    const { key, pub } = await edKey(btoa("k".repeat(32)));
    function brokenStep(): never {
      throw new TypeError("no such page");
    }
    const h = pushHandler(new WebhookVerifier([pub]), () => brokenStep());
    const res = await h(await signed(delivery, key));
    expect(res.status).toBe(500);
    const a = await res.json();
    expect(a.error).toBe("TypeError: no such page");
    expect(a.backtrace).toContain("brokenStep");
    const other = await edKey(btoa("o".repeat(32)));
    expect((await h(await signed(delivery, other.key))).status).toBe(401);
    expect((await h(await signed(delivery, key, "1614265330"))).status).toBe(401);
    expect((await h(await signed('{"queue":"q"}', key))).status).toBe(400);
    const get = await h(new Request("https://worker.example/jobs"));
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST");
  });
});
