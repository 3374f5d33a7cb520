import { describe, expect, it } from "vitest";
import { mapLimit } from "./limit";

describe("mapLimit", () => {
  it("keeps at most n in flight and answers in order", async () => {
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const run = mapLimit([1, 2, 3, 4, 5, 6, 7], 3, async (x) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => release.push(r));
      inFlight--;
      return x * 10;
    });
    // Release the calls one by one as they start, until all seven have run.
    for (let done = 0; done < 7; done++) {
      while (release.length === 0) await Promise.resolve();
      release.shift()!();
    }
    expect(await run).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(most).toBe(3);
  });
  it("fails with the first failure, and answers nothing for nothing", async () => {
    await expect(mapLimit([1, 2], 2, async (x) => (x === 2 ? Promise.reject(new Error("boom")) : x))).rejects.toThrow("boom");
    expect(await mapLimit([], 4, async (x: number) => x)).toEqual([]);
  });
});
