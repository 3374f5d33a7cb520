import { describe, expect, it } from "vitest";
import { counted, exact, plural } from "./format";

describe("counts in words", () => {
  it("writes every digit, grouped", () => {
    expect(exact(0)).toBe("0");
    expect(exact(12400)).toBe("12,400");
    expect(exact(1234567)).toBe("1,234,567");
  });
  it("picks the noun for the count", () => {
    expect(plural(1, "job")).toBe("job");
    expect(plural(0, "job")).toBe("jobs");
    expect(plural(2, "entry", "entries")).toBe("entries");
    expect(counted(1, "queue")).toBe("1 queue");
    expect(counted(1200, "queue")).toBe("1,200 queues");
    expect(counted(3, "selected job")).toBe("3 selected jobs");
  });
});
