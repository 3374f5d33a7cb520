// A namespace's encryption at rest against a real jobbie dev (its own
// master key): enable, a tenant key supplied and rotated with the payload
// readable throughout and the key in no answer, revoked (the payload then
// refused as encryption_key_revoked), another namespace untouched.
import { describe, expect, it } from "vitest";
import { isEncryptionKeyRevoked, JobbieError } from "../src/index.js";
import { client, queue } from "./helpers.js";

const newKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as JobbieError);

describe("a namespace's encryption at rest", () => {
  it("is enabled, given a tenant key, rotated and revoked on the client's namespace only", async () => {
    const c = client();
    const name = queue("ts-enc").replace(".", "-");
    const otherName = queue("ts-enc").replace(".", "-");
    await c.namespaces.create({ name });
    await c.namespaces.create({ name: otherName });
    const ns = c.inNamespace(name);
    const other = c.inNamespace(otherName);
    expect((await ns.getEncryption()).key_source).toBe("none");

    let e = await ns.setEncryption({ enabled: true });
    expect([e.enabled, e.search_decrypt, e.key_source, e.generation]).toEqual([true, false, "operator", 1]);
    const { job_id: id } = await ns.enqueue("charges", { card: "4111" });
    expect((await ns.getJob(id)).payload).toEqual({ card: "4111" });

    const k1 = newKey();
    e = await ns.setEncryption({ tenant_key: k1 });
    expect(e.key_source).toBe("tenant");
    const firstID = e.tenant_key_id;
    expect(firstID).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(await ns.getEncryption())).not.toContain(k1);

    const bad = await refusal(ns.setEncryption({ tenant_key: "c2hvcnQ=" }));
    expect([bad?.status, bad?.field]).toEqual([400, "tenant_key"]);
    expect((await ns.getEncryption()).tenant_key_id).toBe(firstID); // nothing changed

    e = await ns.setEncryption({ tenant_key: newKey(), search_decrypt: true });
    expect(e.tenant_key_id).not.toBe(firstID);
    expect([e.generation, e.search_decrypt]).toEqual([1, true]);
    expect((await ns.getJob(id)).payload).toEqual({ card: "4111" });

    await other.setEncryption({ enabled: true });
    const { job_id: kept } = await other.enqueue("charges", { card: "5500" });

    e = await ns.setEncryption({ revoke_tenant_key: true });
    expect([e.key_source, e.tenant_key_id]).toEqual(["revoked", null]);
    expect(e.revoked_keys?.map((k) => k.generation)).toEqual([1]);
    const revoked = await refusal(ns.getJob(id));
    expect(isEncryptionKeyRevoked(revoked)).toBe(true);
    expect(revoked?.status).toBe(409);
    expect((await other.getJob(kept)).payload).toEqual({ card: "5500" });

    e = await ns.setEncryption({ tenant_key: newKey() });
    expect([e.key_source, e.generation]).toEqual(["tenant", 2]);
    await c.namespaces.delete(name, { force: true });
    await c.namespaces.delete(otherName, { force: true });
  });
});
