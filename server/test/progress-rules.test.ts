// The page report as PostgreSQL runs it under a live lease (one SQL statement,
// sql.writeProgressPostgres) against the rules (rules.ts decide(), which the read path runs): for
// random keyword states, page reports already stored and reports, two keywords in the same state
// end the same — counts, status, page reports, event, counters — or both are refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Keyword } from "../../generated/sqlite/client.ts";
import type { Database } from "../src/db/client.ts";
import { CrawlCalendar, ManualClock } from "../src/crawl/crawl-day.ts";
import { CrawlStatus } from "../src/crawl/rules.ts";
import * as sql from "../src/crawl/sql.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

const providers = (await testProviders()).filter((p) => p === "postgres");
if (!providers.length) console.warn("[skip] one-statement page reports: PostgreSQL not available");

const scenario = fc.record({
  maxPages: fc.integer({ min: 1, max: 6 }),
  lastCompletedPage: fc.integer({ min: 0, max: 6 }),
  totalPages: fc.integer({ min: 0, max: 8 }),
  reported: fc.array(fc.record({ page: fc.integer({ min: 1, max: 7 }), jobs: fc.integer({ min: 0, max: 30 }) }), { maxLength: 5 }),
  report: fc.record({
    page: fc.integer({ min: 0, max: 8 }),
    totalPages: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }),
    jobs: fc.integer({ min: 0, max: 30 }),
    ownLease: fc.boolean(),
  }),
});

describe.each(providers)("one-statement page reports agree with the rules on %s", () => {
  let tdb: TestDatabase;
  let db: Database;
  const clock = new ManualClock(new Date("2026-06-15T06:00:00Z"));
  const calendar = new CrawlCalendar(clock, "Asia/Shanghai");
  let readPath: CrawlStore;
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase("postgres"));
    // The same store without the one-statement writes: it reads, runs decide(), writes.
    readPath = new CrawlStore({ ...db, autocommit: undefined }, calendar);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  let run = 0;
  it("for random states and reports: same keyword, page reports, event and counters, or both refused", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const now = calendar.now();
        const today = calendar.today();
        const sourceId = `p${run++}`;
        await db.reader.source.create({ data: { id: sourceId, name: sourceId, maxPages: s.maxPages, maxRetries: 3, staleAfterSeconds: 1800 } });
        const reported = [...new Map(s.reported.map((r) => [r.page, r.jobs])).entries()];
        const make = async (city: string) => {
          const k = await db.reader.keyword.create({
            data: {
              sourceId, city, job: "j", status: CrawlStatus.CRAWLING, crawlDate: today, lastRequestedAt: now, crawlStartedAt: now,
              heartbeatAt: now, crawlerId: "c", leaseToken: "L", lastCompletedPage: s.lastCompletedPage, totalPages: s.totalPages,
              jobsFound: reported.reduce((n, [, j]) => n + j, 0), pagesCrawled: reported.length,
            },
          });
          for (const [page, jobs] of reported) {
            await db.reader.pageReport.create({ data: { keywordId: k.id, sourceId, crawlDate: today, page, jobsFound: jobs, crawlerId: "c", reportedAt: now } });
          }
          return k;
        };
        const [x, y] = [await make("x"), await make("y")];
        const leaseToken = s.report.ownLease ? "L" : "other";
        const input = (k: Keyword) => ({ keywordId: k.id, leaseToken, page: s.report.page, totalPages: s.report.totalPages, jobsFound: s.report.jobs });
        const sums = async () => {
          const out = Object.fromEntries(Object.values(CrawlStatus).map((st) => [st, [0, 0, 0]])) as Record<string, number[]>;
          for (const c of await db.reader.crawlCounter.findMany({ where: { sourceId } })) {
            const o = out[c.status]!;
            o[0]! += c.keywords;
            o[1]! += c.jobsFound;
            o[2]! += c.pagesCrawled;
          }
          return out;
        };
        const diff = (a: Record<string, number[]>, b: Record<string, number[]>) =>
          Object.fromEntries(Object.keys(a).map((k) => [k, a[k]!.map((v, i) => b[k]![i]! - v)]));
        const after = async (k: Keyword) => ({
          keyword: await db.reader.keyword.findUniqueOrThrow({ where: { id: k.id } }),
          pages: (await db.reader.pageReport.findMany({ where: { keywordId: k.id }, orderBy: { page: "asc" } })).map((p) => [p.page, p.jobsFound]),
          events: (await db.reader.crawlEvent.findMany({ where: { keywordId: k.id } })).map((e) => [e.from, e.to, e.reason, e.crawlerId]),
        });

        // The rules' answer, on y.
        const c0 = await sums();
        const expected = await readPath.reportPageProgress(input(y)).catch((e: { extensions?: { code?: string } }) => e.extensions?.code ?? e);
        const c1 = await sums();
        // The one statement, on x (the store runs it only for reports decide() accepts on a probe state).
        const [got] = await sql.writeProgressPostgres(
          db.autocommit!,
          [{ id: x.id, leaseToken, page: s.report.page, totalPages: s.report.totalPages ?? 0, jobs: s.report.jobs }],
          { now, today },
        );
        const c2 = await sums();
        if (typeof expected === "string" || !("id" in (expected as object))) {
          // Refused by the rules: the statement writes nothing, or the input is one the store never sends it.
          const inputRefused = expected === "BAD_USER_INPUT" && (s.report.page < 1 || (s.report.totalPages ?? 0) > 0 && s.report.page > s.report.totalPages!);
          if (!inputRefused) expect(got).toBeNull();
          if (!got) expect(diff(c1, c2)).toEqual(diff(c0, c0));
          return;
        }
        expect(got).not.toBeNull();
        const [ax, ay] = [await after(x), await after(y)];
        const strip = ({ id: _i, city: _c, createdAt: _a, updatedAt: _u, ...rest }: Keyword) => rest;
        expect(strip(ax.keyword)).toEqual(strip(ay.keyword));
        expect(strip(got!)).toEqual(strip(ax.keyword));
        expect(ax.pages).toEqual(ay.pages);
        expect(ax.events).toEqual(ay.events);
        expect(diff(c1, c2)).toEqual(diff(c0, c1));
      }),
      { numRuns: 120 },
    );
  });
});
