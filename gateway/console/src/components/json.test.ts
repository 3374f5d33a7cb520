import { describe, expect, it } from "vitest";
import { entries, kindOf, nextShown, PAGE, parseJSON, pretty, primitive, sizeOf, startsOpen, summary } from "./json";

describe("json viewer logic", () => {
  it("tells kinds apart", () => {
    expect(kindOf(null)).toBe("null");
    expect(kindOf(undefined)).toBe("null");
    expect(kindOf([])).toBe("array");
    expect(kindOf({})).toBe("object");
    expect(kindOf("x")).toBe("string");
    expect(kindOf(1.5)).toBe("number");
    expect(kindOf(false)).toBe("boolean");
  });

  it("summarises containers", () => {
    expect(summary({})).toBe("{}");
    expect(summary([])).toBe("[]");
    expect(summary({ a: 1 })).toBe("{1 key}");
    expect(summary({ a: 1, b: 2 })).toBe("{2 keys}");
    expect(summary([1])).toBe("[1 item]");
    expect(summary([1, 2, 3])).toBe("[3 items]");
    expect(sizeOf("abc")).toBe(0);
  });

  it("opens the first two levels only", () => {
    expect(startsOpen(0)).toBe(true);
    expect(startsOpen(1)).toBe(true);
    expect(startsOpen(2)).toBe(false);
  });

  it("pages big containers", () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 120; i++) big["k" + i] = i;
    const first = entries(big, PAGE);
    expect(first).toHaveLength(50);
    expect(first[0]).toEqual(["k0", 0]);
    expect(first[49]).toEqual(["k49", 49]);
    expect(nextShown(50, 120)).toBe(100);
    expect(nextShown(100, 120)).toBe(120);
    expect(entries(big, 120)).toHaveLength(120);
    const arr = Array.from({ length: 70 }, (_, i) => i * 2);
    expect(entries(arr, 50).at(-1)).toEqual(["49", 98]);
    expect(entries(5, 50)).toEqual([]);
  });

  it("writes scalars as JSON does", () => {
    expect(primitive('a "quoted"\nline')).toBe('"a \\"quoted\\"\\nline"');
    expect(primitive(null)).toBe("null");
    expect(primitive(3)).toBe("3");
    expect(primitive(true)).toBe("true");
    expect(pretty(undefined)).toBe("null");
    expect(pretty({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });

  it("parses raw JSON or keeps the text", () => {
    expect(parseJSON('{"a":1}')).toEqual({ a: 1 });
    expect(parseJSON("not json")).toBe("not json");
  });
});
