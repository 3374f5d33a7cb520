import { describe, expect, it } from "vitest";
import { servedNamespaces, ssoStartURL, whoLabel } from "./session";
import { needsControl } from "./lib/paths";

describe("ssoStartURL", () => {
  it("names the tenant, or an email whose domain finds it", () => {
    expect(ssoStartURL(" acme ")).toBe("/console/api/sso/start?tenant=acme");
    expect(ssoStartURL("alice@acme.test")).toBe("/console/api/sso/start?email=alice%40acme.test");
    expect(ssoStartURL("a&b=c")).toBe("/console/api/sso/start?tenant=a%26b%3Dc");
  });
});

describe("whoLabel", () => {
  it("names the person, else the key", () => {
    expect(whoLabel({ key_id: "sso:alice@acme.test", person: { name: "Alice", email: "alice@acme.test", subject: "u1", issuer: "https://idp" } })).toBe("Alice");
    expect(whoLabel({ key_id: "sso:bob@acme.test", person: { email: "bob@acme.test", subject: "u2", issuer: "https://idp" } })).toBe("bob@acme.test");
    expect(whoLabel({ key_id: "key_1" })).toBe("Key key_1");
  });
});

describe("servedNamespaces", () => {
  it("offers a local API's namespaces the key may use, else the key's own", () => {
    expect(servedNamespaces({ namespaces: ["*"], namespace: "default", local: { namespaces: ["default", "reports"] } })).toEqual(["default", "reports"]);
    expect(servedNamespaces({ namespaces: ["reports"], namespace: "reports", local: { namespaces: ["default", "reports"] } })).toEqual(["reports"]);
    expect(servedNamespaces({ namespaces: ["*"], namespace: "emails" })).toEqual(["emails"]);
    expect(servedNamespaces({ namespaces: ["a", "b"], namespace: "a" })).toEqual(["a", "b"]);
  });
});

describe("needsControl", () => {
  it("is tenant administration's screens and theirs alone", () => {
    for (const p of ["/keys", "/namespaces", "/backups", "/usage", "/invoices", "/invoices/inv_1", "/roles", "/shards", "/audit"]) expect(needsControl(p)).toBe(true);
    for (const p of ["/", "/queues", "/jobs/j1", "/dead", "/held", "/schedules", "/workers", "/events", "/costs", "/keysmith"]) expect(needsControl(p)).toBe(false);
  });
});
