import { describe, expect, it } from "vitest";
import { grouped, parseExact } from "./invoice-lib";

describe("parseExact", () => {
  it("keeps big quantities exact and other numbers as numbers", () => {
    const v = parseExact<{ lines: { quantity: string; billable: string; amount: number; unit: number }[]; total: number }>(
      '{"lines":[{"quantity":123456789012345678901,"billable": 5,"amount":42,"unit":1000}],"total":42}',
    );
    expect(v.lines[0].quantity).toBe("123456789012345678901");
    expect(v.lines[0].billable).toBe("5");
    expect(v.lines[0].amount).toBe(42);
    expect(v.total).toBe(42);
  });
  it("leaves a string value that looks like a field alone", () => {
    expect(parseExact<{ meter: string }>('{"meter":"quantity"}').meter).toBe("quantity");
  });
});

describe("grouped", () => {
  it("groups any number of digits", () => {
    expect(grouped("123456789012345678901")).toBe("123,456,789,012,345,678,901");
    expect(grouped("0")).toBe("0");
    expect(grouped("-1234")).toBe("-1,234");
    expect(grouped(999)).toBe("999");
    expect(grouped(1000)).toBe("1,000");
  });
});
