// Requests that arrive together are written together (coalesce.ts; on PostgreSQL one statement per
// turn for the page reports, the leased events and the claims of a source), and each is answered as
// if it had been written alone: refusals get their own code, a keyword's second event of the turn
// is decided after its first, claims of different crawlers never share a keyword, and the events and
// counters are the rules'. On SQLite the same requests go through its group commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database, SqlTx } from "../src/db/client.ts";
import { CrawlCalendar, systemClock } from "../src/crawl/crawl-day.ts";
import { CrawlStatus } from "../src/crawl/rules.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

describe.each(await testProviders())("coalesced writes on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  let store: CrawlStore;
  /** Statements the store sent on PostgreSQL's autocommit connection. */
  let statements = 0;
  /** Write transactions the store opened. */
  let transactions = 0;
  const calendar = new CrawlCalendar(systemClock, "Asia/Shanghai");
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    if (db.autocommit) {
      const run: SqlTx = db.autocommit;
      const query = run.query.bind(run);
      run.query = (sql) => (statements++, query(sql));
    }
    const transaction = db.transaction.bind(db);
    db.transaction = (fn) => (transactions++, transaction(fn));
    store = new CrawlStore(db, calendar);
    await importKeywords(db, "qcwy", crossProduct(Array.from({ length: 120 }, (_, i) => `c${i}`), ["x"]));
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  /** Today's counters summed over shards, and the same figures counted from the keyword rows. */
  const distribution = async () => {
    const today = calendar.today();
    const counters = await db.reader.crawlCounter.findMany({ where: { sourceId: "qcwy", crawlDate: today } });
    const keywords = await db.reader.keyword.findMany({ where: { sourceId: "qcwy", crawlDate: today, status: { not: CrawlStatus.IDLE } } });
    const add = (m: Record<string, number[]>, s: string, k: number, j: number, p: number) => {
      const v = (m[s] ??= [0, 0, 0]);
      v[0]! += k;
      v[1]! += j;
      v[2]! += p;
    };
    const fromCounters: Record<string, number[]> = {};
    for (const c of counters) add(fromCounters, c.status, c.keywords, c.jobsFound, c.pagesCrawled);
    const fromRows: Record<string, number[]> = {};
    for (const k of keywords) add(fromRows, k.status, 1, k.jobsFound, k.pagesCrawled);
    for (const [s, v] of Object.entries(fromCounters)) if (v.every((x) => x === 0)) delete fromCounters[s];
    return { fromCounters, fromRows };
  };

  it("claims of one turn: distinct keywords, each leased to its own crawler, with its events", async () => {
    const before = statements;
    const limits = [1, 3, 2, 1, 4, 1, 2, 2];
    const got = await Promise.all(limits.map((n, i) => store.claim("qcwy", `crawler-${i}`, n)));
    if (db.autocommit) expect(statements - before).toBe(1);
    expect(got.map((c) => c.length)).toEqual(limits);
    const ids = got.flat().map((c) => c.keyword.id);
    expect(new Set(ids).size).toBe(ids.length);
    const rows = await db.reader.keyword.findMany({ where: { id: { in: ids } } });
    const events = await db.reader.crawlEvent.findMany({ where: { keywordId: { in: ids } } });
    got.forEach((claims, i) => {
      for (const c of claims) {
        const row = rows.find((r) => r.id === c.keyword.id)!;
        expect([row.status, row.crawlerId, row.leaseToken]).toEqual([CrawlStatus.CRAWLING, `crawler-${i}`, c.leaseToken]);
        expect(events.filter((e) => e.keywordId === c.keyword.id).map((e) => [e.from, e.to, e.reason, e.crawlerId])).toEqual([
          [CrawlStatus.IDLE, CrawlStatus.CRAWLING, "claim", `crawler-${i}`],
        ]);
      }
    });
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
    // A missing source: every claim of its turn is refused.
    const refused = await Promise.allSettled([store.claim("nope", "a", 1), store.claim("nope", "b", 2)]);
    expect(refused.map((r) => r.status === "rejected" && (r.reason as { extensions: { code: string } }).extensions.code)).toEqual(["NOT_FOUND", "NOT_FOUND"]);
  });

  it("big claims of one turn (SQLite: together; PostgreSQL: each alone): each its limit, none shared", async () => {
    const got = await Promise.all([10, 7, 12].map((n, i) => store.claim("qcwy", `big-${i}`, n)));
    expect(got.map((c) => c.length)).toEqual([10, 7, 12]);
    const ids = got.flat().map((c) => c.keyword.id);
    expect(new Set(ids).size).toBe(ids.length);
    const rows = await db.reader.keyword.findMany({ where: { id: { in: ids } } });
    got.forEach((claims, i) => {
      for (const c of claims) expect(rows.find((r) => r.id === c.keyword.id)!.crawlerId).toBe(`big-${i}`);
    });
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
  });

  it("page reports of one turn: each keyword's pages in order, refusals alone, counters as the rows say", async () => {
    const claims = await store.claim("qcwy", "pages", 10);
    const before = statements;
    const reports = claims.flatMap((c, i) => [
      { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: 1, totalPages: 3, jobsFound: 10 + i },
      // the same keyword again in the same turn: decided after page 1 is written
      { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: 2, totalPages: 3, jobsFound: 20 + i },
    ]);
    reports.push({ keywordId: claims[0]!.keyword.id, leaseToken: "not-it", page: 3, totalPages: 3, jobsFound: 1 });
    reports.push({ keywordId: claims[1]!.keyword.id, leaseToken: claims[1]!.leaseToken, page: 0, totalPages: 3, jobsFound: 1 });
    const results = await Promise.allSettled(reports.map((r) => store.reportPageProgress(r)));
    const codes = results.map((r) => (r.status === "fulfilled" ? r.value.status : (r.reason as { extensions: { code: string } }).extensions.code));
    expect(codes).toEqual([...claims.flatMap(() => [CrawlStatus.CRAWLING, CrawlStatus.CRAWLING]), "LEASE_LOST", "BAD_USER_INPUT"]);
    // The first pages in one statement, the second pages in the next, the report without its lease
    // (claims[0]'s third of the turn) in a third; it and the input refused outright are then read.
    if (db.autocommit) expect(statements - before).toBe(5);
    for (const [i, c] of claims.entries()) {
      const row = await db.reader.keyword.findUniqueOrThrow({ where: { id: c.keyword.id } });
      expect([row.lastCompletedPage, row.pagesCrawled, row.jobsFound]).toEqual([2, 2, 30 + 2 * i]);
      const pages = await db.reader.pageReport.findMany({ where: { keywordId: c.keyword.id }, orderBy: { page: "asc" } });
      expect(pages.map((p) => [p.page, p.jobsFound, p.crawlerId])).toEqual([[1, 10 + i, "pages"], [2, 20 + i, "pages"]]);
    }
    // The last pages together: each keyword COMPLETED, with its event.
    const last = await Promise.all(claims.map((c) => store.reportPageProgress({ keywordId: c.keyword.id, leaseToken: c.leaseToken, page: 3, jobsFound: 1 })));
    expect(last.map((k) => k.status)).toEqual(claims.map(() => CrawlStatus.COMPLETED));
    const events = await db.reader.crawlEvent.findMany({ where: { keywordId: { in: claims.map((c) => c.keyword.id) }, to: CrawlStatus.COMPLETED } });
    expect(events.map((e) => [e.reason, e.crawlerId])).toEqual(claims.map(() => ["last page", "pages"]));
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
  });

  it("completions, heartbeats and releases of one turn: each answered as the rules say", async () => {
    const claims = await store.claim("qcwy", "ends", 8);
    const [a, b, c, d, e, f, g, h] = claims.map((x) => ({ keywordId: x.keyword.id, leaseToken: x.leaseToken }));
    const before = statements;
    const results = await Promise.allSettled([
      store.complete({ ...a!, status: CrawlStatus.COMPLETED }),
      store.complete({ ...b!, status: CrawlStatus.FAILED, errorMessage: "boom" }),
      store.complete({ ...c!, leaseToken: "not-it", status: CrawlStatus.COMPLETED }),
      store.heartbeat(d!.keywordId, d!.leaseToken),
      store.release(e!.keywordId, e!.leaseToken),
      // the same completion twice in one turn: the second is a replay of the first
      store.complete({ ...f!, status: CrawlStatus.COMPLETED }),
      store.complete({ ...f!, status: CrawlStatus.COMPLETED }),
      // completed, then released in the same turn: the release comes too late
      store.complete({ ...g!, status: CrawlStatus.COMPLETED }),
      store.release(g!.keywordId, g!.leaseToken),
      store.complete({ ...h!, status: CrawlStatus.COMPLETED }),
    ]);
    const out = results.map((r) => (r.status === "fulfilled" ? r.value.status : (r.reason as { extensions: { code: string } }).extensions.code));
    expect(out).toEqual([
      CrawlStatus.COMPLETED,
      CrawlStatus.FAILED,
      "LEASE_LOST",
      CrawlStatus.CRAWLING,
      CrawlStatus.PARTIAL,
      CrawlStatus.COMPLETED,
      CrawlStatus.COMPLETED,
      CrawlStatus.COMPLETED,
      "INVALID_TRANSITION",
    ].concat([CrawlStatus.COMPLETED]));
    // One statement for the turn, one for the second events of f and g; the three refused (c, and
    // f's and g's second) then read and answered.
    if (db.autocommit) expect(statements - before).toBe(5);
    const replay = results[6] as PromiseFulfilledResult<{ version: number }>;
    expect(replay.value.version).toBe((results[5] as PromiseFulfilledResult<{ version: number }>).value.version);
    const events = await db.reader.crawlEvent.findMany({ where: { keywordId: { in: claims.map((x) => x.keyword.id) }, from: CrawlStatus.CRAWLING } });
    expect(events.map((ev) => [claims.findIndex((x) => x.keyword.id === ev.keywordId), ev.to, ev.crawlerId]).sort()).toEqual(
      [
        [0, CrawlStatus.COMPLETED, "ends"],
        [1, CrawlStatus.FAILED, "ends"],
        [4, CrawlStatus.PARTIAL, "ends"],
        [5, CrawlStatus.COMPLETED, "ends"],
        [6, CrawlStatus.COMPLETED, "ends"],
        [7, CrawlStatus.COMPLETED, "ends"],
      ].sort(),
    );
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
  });

  it("batch completions and single events of one turn: each item answered as the rules say (SQLite: together)", async () => {
    const claims = await store.claim("qcwy", "mixed", 6);
    const [a, b, c, d, e, f] = claims.map((x) => ({ keywordId: x.keyword.id, leaseToken: x.leaseToken }));
    const lastEvent = (await db.reader.crawlEvent.aggregate({ _max: { id: true } }))._max.id ?? 0;
    const before = transactions;
    const [first, single, beat, second] = await Promise.all([
      store.completeMany([
        { ...a!, status: CrawlStatus.COMPLETED },
        { ...b!, status: CrawlStatus.FAILED, errorMessage: "boom" },
        { ...c!, leaseToken: "not-it", status: CrawlStatus.COMPLETED },
      ]),
      // the batch's completion of a, again on its own: a replay
      store.complete({ ...a!, status: CrawlStatus.COMPLETED }),
      store.heartbeat(d!.keywordId, d!.leaseToken),
      store.completeMany([{ ...e!, status: CrawlStatus.COMPLETED }, { ...f!, status: CrawlStatus.COMPLETED }]),
    ]);
    // SQLite: one transaction for the four requests — the turn read and decided in arrival order
    // (not written blind: a is in it twice).
    if (!db.autocommit) expect(transactions - before).toBe(1);
    expect(first.map((r) => r.keyword?.status ?? r.error?.code)).toEqual([CrawlStatus.COMPLETED, CrawlStatus.FAILED, "LEASE_LOST"]);
    expect(first.map((r) => r.keywordId)).toEqual([a!.keywordId, b!.keywordId, c!.keywordId]);
    expect(single.status).toBe(CrawlStatus.COMPLETED);
    expect(single.version).toBe(first[0]!.keyword!.version);
    expect(beat.status).toBe(CrawlStatus.CRAWLING);
    expect(second.map((r) => r.keyword?.status)).toEqual([CrawlStatus.COMPLETED, CrawlStatus.COMPLETED]);
    const events = await db.reader.crawlEvent.findMany({ where: { id: { gt: lastEvent } } });
    expect(events.map((ev) => [claims.findIndex((x) => x.keyword.id === ev.keywordId), ev.to]).sort()).toEqual(
      [[0, CrawlStatus.COMPLETED], [1, CrawlStatus.FAILED], [4, CrawlStatus.COMPLETED], [5, CrawlStatus.COMPLETED]].sort(),
    );
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
  });

  it("batch completions and single events of one turn, every lease held: written blind together", async () => {
    const claims = await store.claim("qcwy", "blind", 4);
    const [a, b, c, d] = claims.map((x) => ({ keywordId: x.keyword.id, leaseToken: x.leaseToken }));
    const before = transactions;
    const [batch, single, beat] = await Promise.all([
      store.completeMany([{ ...a!, status: CrawlStatus.COMPLETED }, { ...b!, status: CrawlStatus.FAILED, errorMessage: "x" }]),
      store.complete({ ...c!, status: CrawlStatus.COMPLETED }),
      store.heartbeat(d!.keywordId, d!.leaseToken),
    ]);
    if (!db.autocommit) expect(transactions - before).toBe(1);
    expect(batch.map((r) => r.keyword?.status)).toEqual([CrawlStatus.COMPLETED, CrawlStatus.FAILED]);
    expect([single.status, beat.status]).toEqual([CrawlStatus.COMPLETED, CrawlStatus.CRAWLING]);
    const { fromCounters, fromRows } = await distribution();
    expect(fromCounters).toEqual(fromRows);
  });
});
