// The day rollover over more keywords than one sweep batch: every keyword holding another day's
// state becomes IDLE exactly once (one event each), keywords already claimed on the new day are
// left alone, and the new day's counters only count the new day.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/client.ts";
import { CrawlCalendar, ManualClock } from "../src/crawl/crawl-day.ts";
import { CrawlStatus } from "../src/crawl/rules.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

describe.each(await testProviders())("day rollover on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  const clock = new ManualClock(new Date("2026-11-29T04:00:00Z")); // midday in Shanghai
  const calendar = new CrawlCalendar(clock, "Asia/Shanghai");
  let store: CrawlStore;
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    store = new CrawlStore(db, calendar);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it("turns 1,150 keywords of yesterday IDLE in batches and leaves today's alone", async () => {
    await importKeywords(db, "qcwy", crossProduct(Array.from({ length: 1300 }, (_, i) => `r${i}`), ["roll"]));
    const yesterday = calendar.today();
    const claims = [];
    for (let i = 0; i < 12; i++) claims.push(...(await store.claim("qcwy", "day1", 100)));
    expect(claims).toHaveLength(1200);
    // Yesterday ends with every status: COMPLETED, FAILED, PARTIAL (released) and still CRAWLING.
    await store.completeMany(claims.slice(0, 400).map((c) => ({ keywordId: c.keyword.id, leaseToken: c.leaseToken, status: CrawlStatus.COMPLETED })));
    await store.completeMany(claims.slice(400, 700).map((c) => ({ keywordId: c.keyword.id, leaseToken: c.leaseToken, status: CrawlStatus.FAILED, errorMessage: "x" })));
    for (const c of claims.slice(700, 800)) await store.release(c.keyword.id, c.leaseToken);

    clock.advance(24 * 3600_000);
    const today = calendar.today();
    expect(today).not.toBe(yesterday);
    // 150 keywords claimed on the new day before the rollover runs: the 100 never requested, then 50 of yesterday's.
    const early = await store.claim("qcwy", "day2", 150);
    expect(early).toHaveLength(150);
    const earlyIds = new Set(early.map((c) => c.keyword.id));
    expect(claims.filter((c) => earlyIds.has(c.keyword.id))).toHaveLength(50);

    const changed = await store.rollover();
    const yesterdays = claims.filter((c) => !earlyIds.has(c.keyword.id)).length;
    expect(yesterdays).toBe(1150);
    expect(changed.get("qcwy")).toBe(yesterdays);

    const rows = await db.reader.keyword.findMany({ where: { sourceId: "qcwy" } });
    for (const k of rows) {
      if (earlyIds.has(k.id)) expect([k.status, k.crawlDate]).toEqual([CrawlStatus.CRAWLING, today]);
      else expect(k.status).toBe(CrawlStatus.IDLE);
    }
    const events = await db.reader.crawlEvent.groupBy({ by: ["keywordId"], where: { reason: "rollover" }, _count: true });
    expect(events).toHaveLength(yesterdays);
    expect(events.every((e) => e._count === 1)).toBe(true);
    // A second run finds nothing left to do.
    expect((await store.rollover()).get("qcwy") ?? 0).toBe(0);
    const counters = await db.reader.crawlCounter.findMany({ where: { sourceId: "qcwy", crawlDate: today } });
    expect(counters.filter((c) => c.keywords !== 0).map((c) => c.status).every((s) => s === CrawlStatus.CRAWLING)).toBe(true);
    expect(counters.reduce((n, c) => n + c.keywords, 0)).toBe(150);
  });
});
