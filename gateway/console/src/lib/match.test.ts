import { describe, expect, it } from "vitest";
import { contains } from "./match";

describe("contains", () => {
  it("finds a part of any value, in any case", () => {
    expect(contains("MAIL", "emails.send")).toBe(true);
    expect(contains(" send ", "x", "emails.send")).toBe(true);
    expect(contains("sms", "emails.send", null, undefined)).toBe(false);
  });
  it("lets an empty filter match everything", () => {
    expect(contains("", "a")).toBe(true);
    expect(contains("  ")).toBe(true);
  });
});
