import { describe, expect, it } from "vitest";
import { expiresAt, keyNamespaces, keyStatus, withoutSecret } from "./key-util";

const base = { id: "k", name: "n", description: "", role: "viewer", namespaces: ["default"], created_at: "2025-01-01T00:00:00Z" };

describe("keyStatus", () => {
  const now = Date.parse("2025-06-01T00:00:00Z");
  it("says revoked before expired", () => {
    expect(keyStatus({ ...base, revoked_at: "2025-02-01T00:00:00Z", expires_at: "2025-03-01T00:00:00Z" }, now)).toBe("revoked");
    expect(keyStatus({ ...base, expires_at: "2025-03-01T00:00:00Z" }, now)).toBe("expired");
    expect(keyStatus({ ...base, expires_at: "2025-07-01T00:00:00Z" }, now)).toBe("active");
    expect(keyStatus(base, now)).toBe("active");
  });
});

describe("expiresAt", () => {
  const now = Date.parse("2025-06-01T12:00:00Z");
  it("writes presets as RFC 3339 in UTC, never as null", () => {
    expect(expiresAt("never", "", now)).toBeNull();
    expect(expiresAt("30d", "", now)).toBe("2025-07-01T12:00:00.000Z");
    expect(expiresAt("365d", "", now)).toBe("2026-06-01T12:00:00.000Z");
  });
  it("reads a custom datetime-local value and refuses an empty one", () => {
    expect(expiresAt("custom", "2030-01-02T03:04:00Z", now)).toBe("2030-01-02T03:04:00.000Z");
    expect(() => expiresAt("custom", "", now)).toThrow(/date/);
    expect(() => expiresAt("custom", "soon", now)).toThrow(/date/);
  });
});

describe("keyNamespaces", () => {
  it('is ["*"] alone for every namespace', () => {
    expect(keyNamespaces(true, ["a", "b"], "b")).toEqual(["*"]);
  });
  it("puts the default first, once", () => {
    expect(keyNamespaces(false, ["a", "b", "c", "b"], "c")).toEqual(["c", "a", "b"]);
    expect(keyNamespaces(false, ["a"], "")).toEqual(["a"]);
    expect(keyNamespaces(false, ["a", "b"], "zzz")).toEqual(["a", "b"]);
  });
});

describe("withoutSecret", () => {
  it("leaves the secret out and keeps the rest", () => {
    const rotated = { ...base, key: "jb_secret", previous_key_valid_until: "2025-01-02T00:00:00Z" };
    const k = withoutSecret(rotated);
    expect(k).toEqual({ ...base, previous_key_valid_until: "2025-01-02T00:00:00Z" });
    expect("key" in k).toBe(false);
  });
});
