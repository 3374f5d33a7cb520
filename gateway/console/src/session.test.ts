import { describe, expect, it } from "vitest";
import { ssoStartURL, whoLabel } from "./session";

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
