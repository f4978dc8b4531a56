import { describe, expect, it } from "vitest";
import { counterDeltas, mergeDeltas } from "./counters.ts";
import { CrawlStatus } from "./rules.ts";

const TODAY = "2026-11-29";
// Keyword 35 lives in counter shard 35 % 16 = 3.
const row = (status: CrawlStatus, crawlDate: string | null, jobsFound = 0, pagesCrawled = 0) => ({ id: 35, status, crawlDate, jobsFound, pagesCrawled });

describe("counterDeltas", () => {
  it("a fresh claim adds one CRAWLING keyword today and leaves yesterday's counters alone", () => {
    expect(counterDeltas(row("COMPLETED", "2026-11-28", 40, 3), row("CRAWLING", TODAY), TODAY)).toEqual([
      { crawlDate: TODAY, status: "CRAWLING", shard: 3, keywords: 1, jobsFound: 0, pagesCrawled: 0 },
    ]);
  });

  it("a page report moves jobs and pages within the status", () => {
    const d = mergeDeltas(counterDeltas(row("CRAWLING", TODAY, 10, 1), row("CRAWLING", TODAY, 25, 2), TODAY));
    expect(d).toEqual([{ crawlDate: TODAY, status: "CRAWLING", shard: 3, keywords: 0, jobsFound: 15, pagesCrawled: 1 }]);
  });

  it("completing moves the keyword with its jobs and pages", () => {
    expect(mergeDeltas(counterDeltas(row("CRAWLING", TODAY, 25, 2), row("COMPLETED", TODAY, 25, 2), TODAY))).toEqual([
      { crawlDate: TODAY, status: "COMPLETED", shard: 3, keywords: 1, jobsFound: 25, pagesCrawled: 2 },
      { crawlDate: TODAY, status: "CRAWLING", shard: 3, keywords: -1, jobsFound: -25, pagesCrawled: -2 },
    ]);
  });

  it("the rollover of yesterday's state changes no counter", () => {
    expect(counterDeltas(row("COMPLETED", "2026-11-28", 9, 1), row("IDLE", "2026-11-28", 9, 1), TODAY)).toEqual([]);
  });

  it("a reset takes the keyword out of today's counters", () => {
    expect(counterDeltas(row("FAILED", TODAY, 3, 1), row("IDLE", null), TODAY)).toEqual([
      { crawlDate: TODAY, status: "FAILED", shard: 3, keywords: -1, jobsFound: -3, pagesCrawled: -1 },
    ]);
  });

  it("an idempotent replay (same row) nets to nothing", () => {
    const r = row("COMPLETED", TODAY, 5, 1);
    expect(mergeDeltas(counterDeltas(r, r, TODAY))).toEqual([]);
  });
});

describe("mergeDeltas", () => {
  it("sums per counter row and orders the rows the same way every time", () => {
    const a = { crawlDate: TODAY, status: CrawlStatus.PARTIAL, shard: 1, keywords: 1, jobsFound: 0, pagesCrawled: 0 };
    const b = { crawlDate: TODAY, status: CrawlStatus.COMPLETED, shard: 1, keywords: 1, jobsFound: 2, pagesCrawled: 1 };
    const c = { crawlDate: TODAY, status: CrawlStatus.CRAWLING, shard: 1, keywords: -2, jobsFound: -2, pagesCrawled: -1 };
    expect(mergeDeltas([a, b, c, { ...a }]).map((d) => [d.status, d.keywords])).toEqual([
      ["COMPLETED", 1],
      ["CRAWLING", -2],
      ["PARTIAL", 2],
    ]);
    expect(mergeDeltas([c, a, b, { ...a }])).toEqual(mergeDeltas([a, b, c, { ...a }]));
  });
});

describe("shards", () => {
  it("put a keyword in one shard for all its moves, and spread keywords over the shards", () => {
    const moves = mergeDeltas([
      ...counterDeltas({ ...row("CRAWLING", TODAY), id: 17 }, { ...row("COMPLETED", TODAY), id: 17 }, TODAY),
      ...counterDeltas({ ...row("CRAWLING", TODAY), id: 18 }, { ...row("COMPLETED", TODAY), id: 18 }, TODAY),
    ]);
    expect(moves.map((d) => [d.status, d.shard, d.keywords])).toEqual([
      ["COMPLETED", 1, 1],
      ["COMPLETED", 2, 1],
      ["CRAWLING", 1, -1],
      ["CRAWLING", 2, -1],
    ]);
  });
});
