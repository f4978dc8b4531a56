// The claim as the store runs it (on PostgreSQL one SQL statement, sql.claimPostgres) against the
// rules (rules.ts decide()): for random keyword states and source settings, every keyword the claim
// takes ends exactly as decide() says, in priority order, with decide()'s event, and today's
// counters still equal the keyword rows. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Keyword } from "../../generated/sqlite/client.ts";
import type { Database } from "../src/db/client.ts";
import { CrawlCalendar, ManualClock } from "../src/crawl/crawl-day.ts";
import { counterDeltas, mergeDeltas } from "../src/crawl/counters.ts";
import { CrawlStatus, decide, effectiveStatus, hasRetriesLeft } from "../src/crawl/rules.ts";
import * as sql from "../src/crawl/sql.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";

const TZ = "Asia/Shanghai";
const HOUR = 3_600_000;
const timeless = ({ updatedAt: _u, createdAt: _c, ...rest }: Keyword) => rest;

const state = fc.record({
  kind: fc.constantFrom("never", "before", "PARTIAL", "FAILED", "CRAWLING", "COMPLETED"),
  stored: fc.constantFrom(...Object.values(CrawlStatus)),
  lastCompletedPage: fc.integer({ min: 0, max: 6 }),
  totalPages: fc.integer({ min: 0, max: 6 }),
  jobsFound: fc.integer({ min: 0, max: 60 }),
  pagesCrawled: fc.integer({ min: 0, max: 6 }),
  retryCount: fc.integer({ min: 0, max: 4 }),
  requestedHoursAgo: fc.integer({ min: 1, max: 60 }),
  errorMessage: fc.constantFrom("", "HTTP 503", "banned"),
});

describe.each(await testProviders())("claim agrees with the rules on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  const clock = new ManualClock(new Date("2026-06-15T06:00:00Z")); // 14:00 in Shanghai
  const calendar = new CrawlCalendar(clock, TZ);
  let store: CrawlStore;
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    store = new CrawlStore(db, calendar);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  let run = 0;
  it("for random states and settings: same rows, order, start pages, events and counters", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(state, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        async (states, maxPages, maxRetries, spare) => {
          const now = calendar.now();
          const today = calendar.today();
          const yesterday = new Date(now.getTime() - 24 * HOUR).toISOString().slice(0, 10);
          const todayStart = calendar.startOf(today);
          const sourceId = `x${provider}${run++}`;
          await db.reader.source.create({ data: { id: sourceId, name: sourceId, maxPages, maxRetries, staleAfterSeconds: 1800 } });
          const before: Keyword[] = [];
          for (const [i, s] of states.entries()) {
            const isToday = s.kind !== "never" && s.kind !== "before";
            const requested = new Date(todayStart.getTime() - s.requestedHoursAgo * HOUR + i); // before today
            const requestedToday = new Date(todayStart.getTime() + ((s.requestedHoursAgo * 60_000 + i) % (12 * HOUR)));
            before.push(
              await db.reader.keyword.create({
                data: {
                  sourceId,
                  city: `c${i}`,
                  job: "j",
                  status: isToday ? (s.kind as CrawlStatus) : s.stored,
                  crawlDate: isToday ? today : s.kind === "before" && s.stored !== CrawlStatus.IDLE ? yesterday : null,
                  lastRequestedAt: s.kind === "never" ? null : isToday ? requestedToday : requested,
                  lastCompletedPage: s.lastCompletedPage,
                  totalPages: s.totalPages,
                  jobsFound: s.jobsFound,
                  pagesCrawled: s.pagesCrawled,
                  retryCount: s.retryCount,
                  errorMessage: s.errorMessage,
                  crawlerId: isToday ? "earlier" : "",
                  leaseToken: isToday ? `old${i}` : null,
                  heartbeatAt: isToday ? requestedToday : null,
                  crawlStartedAt: isToday ? requestedToday : null,
                },
              }),
            );
          }
          // Today's counters as the store would have them for these rows.
          const seed = mergeDeltas(before.flatMap((k) => counterDeltas({ ...k, status: CrawlStatus.IDLE, crawlDate: null }, k, today)), 0);
          await db.transaction((tx) => sql.addToCounters(tx, provider, sourceId, seed));

          // What the rules say, in the claim's priority order.
          const source = { maxPages, maxRetries, staleAfterSeconds: 1800 };
          const rank = (k: Keyword) => {
            const from = effectiveStatus(k, today);
            if (from === CrawlStatus.PARTIAL) return 0;
            if (from === CrawlStatus.FAILED) return hasRetriesLeft(k, source) ? 1 : -1;
            if (from !== CrawlStatus.IDLE) return -1;
            return k.lastRequestedAt === null ? 2 : 3;
          };
          const time = (k: Keyword) => k.lastRequestedAt?.getTime() ?? 0;
          const eligible = before
            .filter((k) => rank(k) >= 0)
            .sort((a, b) => rank(a) - rank(b) || (rank(a) === 2 ? 0 : time(a) - time(b)) || a.id - b.id);
          const expected = eligible.map((k) => ({ k, d: decide(k, source, { type: "CLAIM", crawlerId: "prop", leaseToken: "?", now, today }) }));

          const claims = await store.claim(sourceId, "prop", eligible.length + spare);

          const leased = expected.filter((e) => e.d.ok && e.d.to === CrawlStatus.CRAWLING);
          expect(claims.map((c) => c.keyword.id)).toEqual(leased.map((e) => e.k.id));
          for (const [i, c] of claims.entries()) {
            const d = leased[i]!.d;
            if (!d.ok) throw new Error("unreachable");
            expect({ startPage: c.startPage, resumed: c.resumed }).toEqual({ startPage: d.startPage, resumed: d.resumed });
          }
          const tokens = new Map(claims.map((c) => [c.keyword.id, c.leaseToken]));
          const after = new Map((await db.reader.keyword.findMany({ where: { sourceId } })).map((k) => [k.id, k]));
          const byId = new Map(expected.map((e) => [e.k.id, e.d]));
          for (const k of before) {
            const d = byId.get(k.id);
            const row = after.get(k.id)!;
            const got = timeless(row);
            if (!d) {
              expect(got).toEqual(timeless(k)); // not a candidate: untouched
              continue;
            }
            if (!d.ok) throw new Error(`eligible keyword refused: ${d.message}`);
            const want = { ...k, ...d.patch, version: k.version + 1 } as Keyword;
            if (d.patch.leaseToken) want.leaseToken = tokens.get(k.id)!;
            expect(got).toEqual(timeless(want));
          }
          const events = await db.reader.crawlEvent.findMany({ where: { sourceId }, orderBy: { id: "asc" } });
          expect(events.map((e) => ({ keywordId: e.keywordId, from: e.from, to: e.to, reason: e.reason })).sort((a, b) => a.keywordId - b.keywordId)).toEqual(
            expected
              .map(({ k, d }) => ({ keywordId: k.id, from: d.ok ? d.from : "", to: d.ok ? d.to : "", reason: d.ok ? d.reason : "" }))
              .sort((a, b) => a.keywordId - b.keywordId),
          );
          // Counters = rows.
          const counters = await db.reader.crawlCounter.groupBy({
            by: ["status"],
            where: { sourceId, crawlDate: today },
            _sum: { keywords: true, jobsFound: true, pagesCrawled: true },
          });
          const fromCounters = Object.fromEntries(
            counters
              .map((c) => [c.status, [c._sum.keywords ?? 0, c._sum.jobsFound ?? 0, c._sum.pagesCrawled ?? 0]] as const)
              .filter(([, v]) => v.some((x) => x !== 0)),
          );
          const fromRows: Record<string, number[]> = {};
          for (const k of after.values()) {
            if (k.crawlDate !== today || k.status === CrawlStatus.IDLE) continue;
            const v = (fromRows[k.status] ??= [0, 0, 0]);
            v[0]! += 1;
            v[1]! += k.jobsFound;
            v[2]! += k.pagesCrawled;
          }
          expect(fromCounters).toEqual(fromRows);
        },
      ),
      { numRuns: 40, seed: Number(process.env.CLAIM_RULES_SEED ?? 20261129) },
    );
  });
});
