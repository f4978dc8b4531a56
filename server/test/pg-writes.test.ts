// The single-statement writes PostgreSQL runs without a transaction (sql.ts): a batch whose rows
// lost their compare-and-set writes nothing at all, and a leased write that does not hold the lease
// writes nothing; the store then takes its locked path and answers as the rules say.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Keyword } from "../../generated/sqlite/client.ts";
import type { Database } from "../src/db/client.ts";
import { CrawlCalendar, systemClock } from "../src/crawl/crawl-day.ts";
import { CrawlStatus } from "../src/crawl/rules.ts";
import * as sql from "../src/crawl/sql.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

const providers = (await testProviders()).filter((p) => p === "postgres");
if (!providers.length) console.warn("[skip] single-statement PostgreSQL writes: PostgreSQL not available");

describe.each(providers)("single-statement writes on %s", () => {
  let tdb: TestDatabase;
  let db: Database;
  let store: CrawlStore;
  const calendar = new CrawlCalendar(systemClock, "Asia/Shanghai");
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase("postgres"));
    store = new CrawlStore(db, calendar);
    await importKeywords(db, "qcwy", crossProduct(["w1", "w2", "w3", "w4", "w5", "w6", "w7"], ["x"]));
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const counts = async () => ({
    events: await db.reader.crawlEvent.count(),
    reports: await db.reader.pageReport.count(),
    counters: await db.reader.crawlCounter.findMany({ orderBy: [{ status: "asc" }, { shard: "asc" }] }),
    keywords: await db.reader.keyword.findMany({ orderBy: { id: "asc" } }),
  });

  it("a strict batch with one stale version fails with the CAS error and writes nothing", async () => {
    const claims = await store.claim("qcwy", "t", 2);
    expect(claims).toHaveLength(2);
    const before = await counts();
    const now = new Date();
    const today = calendar.today();
    const writes = claims.map(({ keyword }, i) => ({
      before: { ...keyword, version: i === 1 ? keyword.version - 1 : keyword.version }, // the second is stale
      after: { ...keyword, status: CrawlStatus.COMPLETED, version: keyword.version + 1 } as Keyword,
      crawlerId: "t",
      pageReport: { page: 1, jobsFound: 3 },
      event: { from: CrawlStatus.CRAWLING, to: CrawlStatus.COMPLETED, reason: "complete" },
    }));
    const counters = [{ sourceId: "qcwy", deltas: [{ crawlDate: today, status: CrawlStatus.COMPLETED, shard: 0, keywords: 2, jobsFound: 6, pagesCrawled: 2 }] }];
    const err = await sql.writeKeywordsPostgres(db.autocommit!, writes, counters, { now, today }, true).catch((e) => e);
    expect(sql.isCasFailure(err)).toBe(true);
    expect(await counts()).toEqual(before);
    // Not strict: the matched row is written, the rest (counters of the whole batch) is not, and the count says so.
    await db.transaction(async (tx) => {
      expect(await sql.writeKeywordsPostgres(tx, writes, counters, { now, today }, false)).toBe(1);
      throw new Error("roll back");
    }).catch(() => {});
    expect(await counts()).toEqual(before);
  });

  it("a leased write without the lease writes nothing; the store answers LEASE_LOST / replay as the rules do", async () => {
    const [c] = await store.claim("qcwy", "t2", 1);
    const before = await counts();
    const now = new Date();
    const w = { id: c!.keyword.id, patch: { status: CrawlStatus.COMPLETED, heartbeatAt: now }, to: CrawlStatus.COMPLETED, reason: "complete" };
    const at = { now, today: calendar.today() };
    expect(await sql.writeLeasedManyPostgres(db.autocommit!, [{ ...w, leaseToken: "not-it" }], at)).toEqual([null]);
    expect(await sql.writeLeasedManyPostgres(db.autocommit!, [{ ...w, leaseToken: c!.leaseToken }], { now, today: "2000-01-01" })).toEqual([null]);
    expect(await counts()).toEqual(before);
    await expect(store.complete({ keywordId: c!.keyword.id, leaseToken: "not-it", status: CrawlStatus.COMPLETED })).rejects.toMatchObject({
      extensions: { code: "LEASE_LOST" },
    });
    const done = await store.complete({ keywordId: c!.keyword.id, leaseToken: c!.leaseToken, status: CrawlStatus.COMPLETED });
    expect(done.status).toBe(CrawlStatus.COMPLETED);
    const after = await counts();
    expect(after.events).toBe(before.events + 1);
    // A replay of the same completion: the lease no longer holds a CRAWLING row, so the store reads and answers the replay.
    const again = await store.complete({ keywordId: c!.keyword.id, leaseToken: c!.leaseToken, status: CrawlStatus.COMPLETED });
    expect(again.version).toBe(done.version);
    expect(await counts()).toEqual(after);
  });

  it("leased writes in one statement: the item not holding its lease is left out, the others written with events and counters", async () => {
    const claims = await store.claim("qcwy", "t3", 3);
    expect(claims).toHaveLength(3);
    const before = await counts();
    const now = new Date();
    const at = { now, today: calendar.today() };
    const writes = claims.map((c, i) => ({
      id: c.keyword.id,
      leaseToken: i === 1 ? "not-it" : c.leaseToken,
      patch: i === 2 ? { status: CrawlStatus.FAILED, heartbeatAt: now, errorMessage: "boom" } : { status: CrawlStatus.COMPLETED, heartbeatAt: now },
      to: i === 2 ? CrawlStatus.FAILED : CrawlStatus.COMPLETED,
      reason: i === 2 ? "fail" : "complete",
    }));
    // The same keyword twice: refused before anything is sent (one UPDATE row could not answer both).
    await expect(sql.writeLeasedManyPostgres(db.autocommit!, [writes[0]!, writes[0]!], at)).rejects.toThrow(/twice/);
    const rows = await sql.writeLeasedManyPostgres(db.autocommit!, writes, at);
    expect(rows.map((r) => r && [r.id, r.status, r.errorMessage])).toEqual([
      [claims[0]!.keyword.id, CrawlStatus.COMPLETED, ""],
      null,
      [claims[2]!.keyword.id, CrawlStatus.FAILED, "boom"],
    ]);
    const after = await counts();
    expect(after.events).toBe(before.events + 2);
    const untouched = await db.reader.keyword.findUniqueOrThrow({ where: { id: claims[1]!.keyword.id } });
    expect([untouched.status, untouched.version]).toEqual([CrawlStatus.CRAWLING, claims[1]!.keyword.version]);
  });
});
