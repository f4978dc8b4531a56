// A batch of completions on leased keywords is written without reading the keywords first (SQLite:
// all or nothing, store.ts transitionManyLeased; PostgreSQL: item by item, with the other leased
// writes of the turn, store.ts writeLeased); an item that does not hold its lease is then read and
// decided — the refused one gets its code, the others commit with their events and counters,
// exactly as the rules say.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/client.ts";
import { CrawlCalendar, systemClock } from "../src/crawl/crawl-day.ts";
import { CrawlStatus } from "../src/crawl/rules.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

describe.each(await testProviders())("leased batches on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  let store: CrawlStore;
  const calendar = new CrawlCalendar(systemClock, "Asia/Shanghai");
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    store = new CrawlStore(db, calendar);
    await importKeywords(db, "qcwy", crossProduct(["a", "b", "c", "d", "e", "f"], ["x"]));
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const counts = async () => ({
    events: await db.reader.crawlEvent.findMany({ orderBy: { id: "asc" } }),
    counters: await db.reader.crawlCounter.findMany({ orderBy: [{ status: "asc" }, { shard: "asc" }] }),
    keywords: await db.reader.keyword.findMany({ orderBy: { id: "asc" } }),
  });
  const sum = (cs: { status: string; keywords: number }[], s: CrawlStatus) => cs.filter((c) => c.status === s).reduce((n, c) => n + c.keywords, 0);

  it("refuses the item without its lease, commits the others with events and counters; a replay changes nothing", async () => {
    const claims = await store.claim("qcwy", "lb", 3);
    expect(claims).toHaveLength(3);
    const before = await counts();
    const results = await store.completeMany(
      claims.map((c, i) => ({
        keywordId: c.keyword.id,
        leaseToken: i === 2 ? "not-it" : c.leaseToken,
        status: i === 1 ? CrawlStatus.FAILED : CrawlStatus.COMPLETED,
        errorMessage: i === 1 ? "boom" : null,
      })),
    );
    expect(results.map((r) => r.keyword?.status ?? r.error?.code)).toEqual([CrawlStatus.COMPLETED, CrawlStatus.FAILED, "LEASE_LOST"]);
    expect(results[1]!.keyword!.errorMessage).toBe("boom");
    const mid = await counts();
    expect(mid.events.slice(before.events.length).map((e) => [e.keywordId, e.from, e.to, e.reason, e.crawlerId])).toEqual([
      [claims[0]!.keyword.id, "CRAWLING", "COMPLETED", "complete", "lb"],
      [claims[1]!.keyword.id, "CRAWLING", "FAILED", "fail", "lb"],
    ]);
    expect(mid.keywords.find((k) => k.id === claims[2]!.keyword.id)).toEqual(before.keywords.find((k) => k.id === claims[2]!.keyword.id));

    // Every lease held: the fast write. Rows come back in input order, as stored.
    const rest = await store.completeMany([{ keywordId: claims[2]!.keyword.id, leaseToken: claims[2]!.leaseToken, status: CrawlStatus.COMPLETED }]);
    const after = await counts();
    expect(rest).toEqual([{ keywordId: claims[2]!.keyword.id, keyword: after.keywords.find((k) => k.id === claims[2]!.keyword.id) }]);
    expect(after.events).toHaveLength(mid.events.length + 1);
    expect(sum(after.counters, CrawlStatus.COMPLETED) - sum(before.counters, CrawlStatus.COMPLETED)).toBe(2);
    expect(sum(after.counters, CrawlStatus.FAILED) - sum(before.counters, CrawlStatus.FAILED)).toBe(1);
    expect(sum(after.counters, CrawlStatus.CRAWLING) - sum(before.counters, CrawlStatus.CRAWLING)).toBe(-3);

    // The whole batch again (an answer lost, the spider retries): replays, nothing written.
    const again = await store.completeMany(claims.slice(0, 1).map((c) => ({ keywordId: c.keyword.id, leaseToken: c.leaseToken, status: CrawlStatus.COMPLETED })));
    expect(again[0]!.keyword!.status).toBe(CrawlStatus.COMPLETED);
    expect(await counts()).toEqual(after);
  });

  it("returns the keywords in input order, as stored, when the batch is written in one go", async () => {
    const claims = await store.claim("qcwy", "lb2", 3);
    const items = [...claims].reverse().map((c) => ({ keywordId: c.keyword.id, leaseToken: c.leaseToken, status: CrawlStatus.COMPLETED }));
    const results = await store.completeMany(items);
    const stored = await db.reader.keyword.findMany({ where: { id: { in: claims.map((c) => c.keyword.id) } } });
    expect(results.map((r) => r.keywordId)).toEqual(items.map((i) => i.keywordId));
    for (const r of results) expect(r.keyword).toEqual(stored.find((k) => k.id === r.keywordId));
  });
});
