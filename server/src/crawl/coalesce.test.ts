import { describe, expect, it } from "vitest";
import { coalesce } from "./coalesce.ts";

describe("coalesce", () => {
  it("writes the items of one turn together, in arrival order, and answers each on its own", async () => {
    const calls: number[][] = [];
    const write = coalesce(async (xs: readonly number[]) => {
      calls.push([...xs]);
      return xs.map((x) => (x === 3 ? new Error("three") : x * 10));
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((x) => write(x)));
    expect(calls).toEqual([[1, 2, 3, 4]]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([10, 20, "three", 40]);
    // A later turn is another write.
    expect(await write(5)).toBe(50);
    expect(calls).toEqual([[1, 2, 3, 4], [5]]);
  });

  it("splits a turn into writes of at most `max` items; a write that throws rejects its own items only", async () => {
    const calls: number[][] = [];
    const write = coalesce(async (xs: readonly number[]) => {
      calls.push([...xs]);
      if (xs.includes(0)) throw new Error("boom");
      return [...xs];
    }, 2);
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map((x) => write(x)));
    expect(calls).toEqual([[0, 1], [2, 3], [4]]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
  });

  it("items that arrive in separate I/O callbacks of one poll are written together", async () => {
    const calls: number[][] = [];
    const write = coalesce(async (xs: readonly number[]) => (calls.push([...xs]), [...xs]));
    // Two timers due at once run in the same timers phase, before the turn ends at setImmediate.
    const both = await Promise.all([0, 1].map((x) => new Promise<number>((resolve) => setTimeout(() => resolve(write(x)), 5))));
    expect(both).toEqual([0, 1]);
    expect(calls).toEqual([[0, 1]]);
  });
});
