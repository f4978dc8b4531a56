// Today's counters (what stats and the live distribution read) agree with the keyword rows after a
// random concurrent workload of every operation, on both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClaimKeywordsDocument,
  HeartbeatDocument,
  ReleaseKeywordDocument,
  ReportCrawlCompleteDocument,
  ReportPageProgressDocument,
} from "../../spiders/src/gql/graphql.ts";
import { ageHeartbeat, cities, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

/** mulberry32: a small seeded PRNG, so a failing run can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(await testProviders())("counters on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  it("match the keyword rows after 16 workers race through every operation", async () => {
    await s.importKeywords("zhilian", cities(60), ["计数"]);
    const seed = Number(process.env.COUNTER_SEED ?? 20261129);
    const spider = s.tokens.spider;
    const ids = (await s.ok(`{ keywords(source: "zhilian", first: 100) { edges { node { id } } } }`)).keywords.edges.map((e: any) => e.node.id);

    const worker = async (w: number) => {
      const rnd = prng(seed + w);
      const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
      for (let step = 0; step < 12; step++) {
        const roll = rnd();
        if (roll < 0.06) {
          await s.request(`mutation($id: ID!) { resetKeyword(id: $id) { id } }`, { id: pick(ids) });
          continue;
        }
        if (roll < 0.1) {
          await ageHeartbeat(s, pick(ids), 7200);
          await s.app.runJob("stale-sweep");
          continue;
        }
        const claims = (await s.ok(ClaimKeywordsDocument, { source: "zhilian", crawlerId: `w${w}`, limit: 1 + Math.floor(rnd() * 3) }, spider)).claimKeywords;
        for (const c of claims) {
          const input = { keywordId: c.keyword.id, leaseToken: c.leaseToken };
          const pages = Math.floor(rnd() * 6);
          for (let p = c.startPage; p < c.startPage + pages && p <= 15; p++) {
            const r = await s.request(ReportPageProgressDocument, { input: { ...input, page: p, jobsFound: Math.floor(rnd() * 30) } }, { token: spider });
            if (r.errors) break; // the lease was swept or reset meanwhile: drop it, as a spider does
            if (rnd() < 0.2) await s.request(ReportPageProgressDocument, { input: { ...input, page: p, jobsFound: Math.floor(rnd() * 30) } }, { token: spider });
          }
          const end = rnd();
          if (end < 0.3) await s.request(ReportCrawlCompleteDocument, { input: { ...input, status: "COMPLETED" } }, { token: spider });
          else if (end < 0.55) await s.request(ReportCrawlCompleteDocument, { input: { ...input, status: "FAILED", errorMessage: "x" } }, { token: spider });
          else if (end < 0.8) await s.request(ReleaseKeywordDocument, input, { token: spider });
          else await s.request(HeartbeatDocument, input, { token: spider });
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));

    const today = s.app.services.calendar.today();
    const db = s.app.services.database.reader;
    const rows = await db.keyword.findMany({ where: { sourceId: "zhilian" } });
    const expected = { idle: 0, crawling: 0, completed: 0, failed: 0, partial: 0 } as Record<string, number>;
    let jobs = 0;
    let pages = 0;
    for (const k of rows) {
      const status = k.crawlDate === today ? k.status : "IDLE";
      expected[status.toLowerCase()]!++;
      if (k.crawlDate === today) {
        jobs += k.jobsFound;
        pages += k.pagesCrawled;
        const reports = await db.pageReport.findMany({ where: { keywordId: k.id, crawlDate: today } });
        expect(k.jobsFound, `keyword ${k.id}`).toBe(reports.reduce((n, r) => n + r.jobsFound, 0));
        expect(k.pagesCrawled, `keyword ${k.id}`).toBe(reports.length);
      }
    }
    const stats = (await s.ok(`{ stats(source: "zhilian") { total used jobsFound pagesCrawled byStatus { idle crawling completed failed partial } } }`)).stats;
    expect(stats.byStatus).toEqual(expected);
    expect(stats).toMatchObject({ total: 60, used: 60 - expected.idle!, jobsFound: jobs, pagesCrawled: pages });
    // The workload really did exercise the machine.
    expect(expected.completed! + expected.failed! + expected.partial!).toBeGreaterThan(10);
  });
});
