// The history prune: events, page reports and their postings' sightings of crawl days older than
// HISTORY_RETENTION_DAYS go; recent days, keywords, postings and the daily counters stay.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClaimKeywordsDocument,
  ReportCrawlCompleteDocument,
  ReportPageProgressDocument,
  SubmitJobPostingsDocument,
} from "../../spiders/src/gql/graphql.ts";
import { ManualClock } from "../src/crawl/crawl-day.ts";
import { historyPrune, pruneHistory, retentionStart } from "../src/jobs/history-prune.ts";
import { startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

describe("retentionStart", () => {
  it("counts back whole crawl days, across months and leap days", () => {
    expect(retentionStart("2026-11-29", 90)).toBe("2026-08-31");
    expect(retentionStart("2028-03-01", 1)).toBe("2028-02-29");
    expect(retentionStart("2026-11-29", 0)).toBe("2026-11-29");
  });
});

describe.each(await testProviders())("history prune on %s", (provider) => {
  // Mornings in Asia/Shanghai: an old day (beyond 90 days), a recent one, and today.
  const OLD = "2026-08-01";
  const RECENT = "2026-11-20";
  const clock = new ManualClock(new Date(`${OLD}T02:00:00Z`));
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider, { clock });
    await s.importKeywords("boss", ["北京"], ["前端", "后端"]);
  });
  afterAll(() => s?.close());

  /**
   * A day's crawl of both keywords: two pages each, postings on every page, then complete. With
   * `died`, the first keyword also submits page 3's postings and never reports it, and the second
   * submits page 1's postings and fails before any report (sightings, no page report that day).
   */
  const crawlDay = async (tag: string, died = false) => {
    const claims = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: `c-${tag}`, limit: 2 }, s.tokens.spider)).claimKeywords;
    expect(claims).toHaveLength(2);
    const submit = async (c: (typeof claims)[number], page: number, ids: string[]) => {
      const postings = ids.map((externalId) => ({ externalId, title: "岗位" }));
      const r = await s.request(SubmitJobPostingsDocument, { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, postings }, { token: s.tokens.spider });
      expect(r.errors).toBeUndefined();
    };
    for (const c of claims) {
      const lease = { keywordId: c.keyword.id, leaseToken: c.leaseToken };
      if (died && c === claims[1]) {
        await submit(c, 1, ["d1", "d2", "d3", "shared"]);
        await s.ok(ReportCrawlCompleteDocument, { input: { ...lease, status: "FAILED", errorMessage: "crawler died" } }, s.tokens.spider);
        continue;
      }
      for (const page of [1, 2]) {
        await submit(c, page, [`${tag}-${c.keyword.id}-${page}a`, `${tag}-${c.keyword.id}-${page}b`, "shared"]);
        await s.ok(ReportPageProgressDocument, { input: { ...lease, page, jobsFound: 3, totalPages: 3 } }, s.tokens.spider);
      }
      if (died) await submit(c, 3, ["o1", "o2", "o3"]);
      await s.ok(ReportCrawlCompleteDocument, { input: { ...lease, status: "COMPLETED" } }, s.tokens.spider);
    }
  };

  const counts = async (day: string) => {
    const db = s.app.services.database.reader;
    return {
      events: await db.crawlEvent.count({ where: { crawlDate: day } }),
      pages: await db.pageReport.count({ where: { crawlDate: day } }),
      sightings: await db.postingSighting.count({ where: { crawlDate: day } }),
      counters: await db.crawlCounter.count({ where: { crawlDate: day } }),
    };
  };

  it("deletes the days before the retention window, batch by batch, and keeps the rest", async () => {
    await crawlDay("old", true);
    clock.set(`${RECENT}T02:00:00Z`);
    await crawlDay("recent");
    clock.set("2026-11-29T02:00:00Z");
    const old = await counts(OLD);
    const recent = await counts(RECENT);
    // Per day: 2 claims + 2 completions; 4 pages; 3 postings a page (12 sightings). On the old day
    // 2 pages (6 sightings) of the first keyword, 3 more of a page never reported, and 4 of the
    // second keyword, which reported nothing.
    expect(old).toMatchObject({ events: 4, pages: 2, sightings: 13 });
    expect(old.counters).toBeGreaterThan(0);
    const oldStats = await s.ok(`query { stats(source: "boss", date: "${OLD}") { jobsFound pagesCrawled byStatus { completed } } }`);
    const postings = await s.app.services.database.reader.jobPosting.count();

    // Batches of 3 rows: several transactions per table.
    const result = await pruneHistory(s.app.services.database, retentionStart("2026-11-29", 90), 3);
    expect(result).toEqual({ before: "2026-08-31", deleted: { CrawlEvent: 4, PageReport: 2, PostingSighting: 13 } });
    expect(await counts(OLD)).toEqual({ events: 0, pages: 0, sightings: 0, counters: old.counters });
    expect(await counts(RECENT)).toEqual(recent);
    // The old day's distribution is still there (counters), and so are keywords and postings.
    expect(await s.ok(`query { stats(source: "boss", date: "${OLD}") { jobsFound pagesCrawled byStatus { completed } } }`)).toEqual(oldStats);
    expect(await s.app.services.database.reader.jobPosting.count()).toBe(postings);
    expect(await s.app.services.database.reader.keyword.count({ where: { sourceId: "boss" } })).toBe(2);

    // The job as scheduled: nothing left to delete; /metrics counts what went.
    expect(await s.app.runJob("history-prune")).toBe(0);
    clock.set("2027-02-20T02:00:00Z"); // now RECENT is 92 days back
    expect(await s.app.runJob("history-prune")).toBe(4 + 4 + 12);
    expect(await counts(RECENT)).toMatchObject({ events: 0, pages: 0, sightings: 0 });
    const metrics = await (await fetch(s.app.url("/metrics"))).text();
    expect(metrics).toContain('crawl_history_pruned_rows_total{table="PostingSighting"} 12');
    expect(metrics).toMatch(/crawl_job_runs_total\{job="history-prune",outcome="ok"\} 2/);
  });

  it("HISTORY_RETENTION_DAYS=0 keeps everything", async () => {
    clock.set("2027-02-21T02:00:00Z");
    await crawlDay("kept");
    clock.set("2030-01-01T02:00:00Z");
    const before = await counts("2027-02-21");
    expect(await historyPrune(s.app.services.database, s.app.services.calendar, 0, pino({ level: "silent" }))).toBeNull();
    expect(await counts("2027-02-21")).toEqual(before);
    expect(before.events).toBe(4);
  });
});
