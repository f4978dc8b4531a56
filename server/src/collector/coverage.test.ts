import { describe, expect, it } from "vitest";
import { addRange, coveredCount, nextBatch, normalize, parseRanges, reachesBottom, type Range } from "./coverage.ts";

/** Every batch a run would take, newest first, covering each as it goes. */
function drain(start: Range[], total: number, size: number) {
  let ranges = start;
  const batches: Range[] = [];
  for (let b = nextBatch(ranges, total, size); b; b = nextBatch(ranges, total, size)) {
    batches.push(b);
    ranges = addRange(ranges, b[0], b[1]);
  }
  return { batches, ranges };
}

describe("coverage", () => {
  it("normalize sorts, merges touching and overlapping ranges, drops empty ones", () => {
    expect(normalize([[50, 60], [0, 10], [10, 20], [15, 30], [40, 40]])).toEqual([[0, 30], [50, 60]]);
  });

  it("a first run goes from the top down in batches; the last batch is short", () => {
    const { batches, ranges } = drain([], 250, 100);
    expect(batches).toEqual([[150, 250], [50, 150], [0, 50]]);
    expect(ranges).toEqual([[0, 250]]);
    expect(reachesBottom(ranges)).toBe(true);
  });

  it("an incremental run takes only what was appended", () => {
    expect(drain([[0, 10_000]], 10_500, 100).batches).toEqual([[10_400, 10_500], [10_300, 10_400], [10_200, 10_300], [10_100, 10_200], [10_000, 10_100]]);
  });

  it("a stopped run's gap is filled after the new head, never skipped", () => {
    // Covered [0,1000) earlier; a run covered [1300,1500) and stopped; 100 appended since.
    const { batches, ranges } = drain([[0, 1000], [1300, 1500]], 1600, 200);
    expect(batches).toEqual([[1500, 1600], [1100, 1300], [1000, 1100]]);
    expect(ranges).toEqual([[0, 1600]]);
  });

  it("nothing to do when everything below total is covered; ranges above total are ignored", () => {
    expect(nextBatch([[0, 500]], 500, 100)).toBeNull();
    expect(nextBatch([[0, 100], [200, 900]], 500, 100)).toEqual([[100, 200]][0]);
    expect(nextBatch([], 0, 100)).toBeNull();
  });

  it("counts covered offsets below total", () => {
    expect(coveredCount([[0, 10], [20, 40]], 30)).toBe(20);
    expect(reachesBottom([[5, 10]])).toBe(false);
  });

  it("parses what it formats and rejects garbage", () => {
    expect(parseRanges(JSON.stringify(addRange([[0, 5]], 5, 9)))).toEqual([[0, 9]]);
    expect(parseRanges('[[1,"x"],[3,4]]')).toEqual([[3, 4]]);
    expect(parseRanges("{}")).toEqual([]);
  });
});
