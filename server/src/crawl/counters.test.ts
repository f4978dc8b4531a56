import { describe, expect, it } from "vitest";
import { COUNTER_SHARDS, counterDeltas, counterShard, mergeDeltas } from "./counters.ts";
import { CrawlStatus } from "./rules.ts";

const TODAY = "2026-11-29";
const row = (status: CrawlStatus, crawlDate: string | null, jobsFound = 0, pagesCrawled = 0) => ({ id: 35, status, crawlDate, jobsFound, pagesCrawled });

describe("counterDeltas", () => {
  it("a fresh claim adds one CRAWLING keyword today and leaves yesterday's counters alone", () => {
    expect(counterDeltas(row("COMPLETED", "2026-11-28", 40, 3), row("CRAWLING", TODAY), TODAY)).toEqual([
      { crawlDate: TODAY, status: "CRAWLING", keywords: 1, jobsFound: 0, pagesCrawled: 0 },
    ]);
  });

  it("a page report moves jobs and pages within the status", () => {
    const d = mergeDeltas(counterDeltas(row("CRAWLING", TODAY, 10, 1), row("CRAWLING", TODAY, 25, 2), TODAY), 3);
    expect(d).toEqual([{ crawlDate: TODAY, status: "CRAWLING", shard: 3, keywords: 0, jobsFound: 15, pagesCrawled: 1 }]);
  });

  it("completing moves the keyword with its jobs and pages", () => {
    expect(mergeDeltas(counterDeltas(row("CRAWLING", TODAY, 25, 2), row("COMPLETED", TODAY, 25, 2), TODAY), 3)).toEqual([
      { crawlDate: TODAY, status: "COMPLETED", shard: 3, keywords: 1, jobsFound: 25, pagesCrawled: 2 },
      { crawlDate: TODAY, status: "CRAWLING", shard: 3, keywords: -1, jobsFound: -25, pagesCrawled: -2 },
    ]);
  });

  it("the rollover of yesterday's state changes no counter", () => {
    expect(counterDeltas(row("COMPLETED", "2026-11-28", 9, 1), row("IDLE", "2026-11-28", 9, 1), TODAY)).toEqual([]);
  });

  it("a reset takes the keyword out of today's counters", () => {
    expect(counterDeltas(row("FAILED", TODAY, 3, 1), row("IDLE", null), TODAY)).toEqual([
      { crawlDate: TODAY, status: "FAILED", keywords: -1, jobsFound: -3, pagesCrawled: -1 },
    ]);
  });

  it("an idempotent replay (same row) nets to nothing", () => {
    const r = row("COMPLETED", TODAY, 5, 1);
    expect(mergeDeltas(counterDeltas(r, r, TODAY), 0)).toEqual([]);
  });
});

describe("mergeDeltas", () => {
  it("sums per counter row and orders the rows the same way every time", () => {
    const a = { crawlDate: TODAY, status: CrawlStatus.PARTIAL, keywords: 1, jobsFound: 0, pagesCrawled: 0 };
    const b = { crawlDate: TODAY, status: CrawlStatus.COMPLETED, keywords: 1, jobsFound: 2, pagesCrawled: 1 };
    const c = { crawlDate: TODAY, status: CrawlStatus.CRAWLING, keywords: -2, jobsFound: -2, pagesCrawled: -1 };
    expect(mergeDeltas([a, b, c, { ...a }], 1).map((d) => [d.status, d.keywords])).toEqual([
      ["COMPLETED", 1],
      ["CRAWLING", -2],
      ["PARTIAL", 2],
    ]);
    expect(mergeDeltas([c, a, b, { ...a }], 1)).toEqual(mergeDeltas([a, b, c, { ...a }], 1));
  });
});

describe("shards", () => {
  it("put all of one write's moves in its one shard: a batch of keywords locks two counter rows, not two per shard", () => {
    const moves = mergeDeltas(
      [17, 18, 19, 20].flatMap((id) => counterDeltas({ ...row("CRAWLING", TODAY), id }, { ...row("COMPLETED", TODAY), id }, TODAY)),
      5,
    );
    expect(moves.map((d) => [d.status, d.shard, d.keywords])).toEqual([
      ["COMPLETED", 5, 4],
      ["CRAWLING", 5, -4],
    ]);
  });

  it("pick every shard, and only shards that exist", () => {
    const seen = new Set(Array.from({ length: 2000 }, counterShard));
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: COUNTER_SHARDS }, (_, i) => i));
  });
});
