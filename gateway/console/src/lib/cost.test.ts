import { describe, expect, it } from "vitest";
import { dollars, parseCost, sumCosts, usd, usdOf } from "./cost";

describe("parseCost", () => {
  it("reads decimals into nano-dollars exactly", () => {
    expect(parseCost("0.0042")).toBe(4_200_000n);
    expect(parseCost("3")).toBe(3_000_000_000n);
    expect(parseCost("0.000000001")).toBe(1n);
    expect(parseCost("12345678901.999999999")).toBe(12_345_678_901_999_999_999n);
  });
  it("reads what is not a cost as 0", () => {
    for (const s of ["", "-1", "1.", ".5", "1.0000000001", "1e3", "abc", null, undefined]) expect(parseCost(s)).toBe(0n);
  });
});

describe("sumCosts", () => {
  it("adds where floats would not", () => {
    // 0.1 + 0.2 is 0.30000000000000004 as floats.
    expect(usd(sumCosts(["0.1", "0.2"]))).toBe("$0.30");
    const many = Array.from({ length: 1000 }, () => "0.000000001");
    expect(sumCosts(many)).toBe(1000n);
    expect(usd(sumCosts(["9007199.254740993", "0.000000001"]))).toBe("$9,007,199.254740994");
  });
});

describe("usd", () => {
  it("writes every cent, and places below a cent only when there are any", () => {
    expect(usd(0n)).toBe("$0.00");
    expect(usdOf("12.5")).toBe("$12.50");
    expect(usdOf("0.0042")).toBe("$0.0042");
    expect(usdOf("1234567.000000001")).toBe("$1,234,567.000000001");
    expect(usdOf("25")).toBe("$25.00");
    expect(usd(-1_500_000_000n)).toBe("-$1.50");
  });
  it("gives a chart its dollars", () => {
    expect(dollars(4_200_000n)).toBeCloseTo(0.0042, 12);
  });
});
