// The scheduled jobs: the stale sweep on its cron, and the day rollover with an injected clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { ManualClock } from "../src/crawl/crawl-day.ts";
import { middayTimeZone, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const STATS = `query($s: ID!, $d: Date) { stats(source: $s, date: $d) {
  date total used unused jobsFound pagesCrawled byStatus { idle crawling completed failed partial } } }`;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(await testProviders())("scheduled jobs on %s", (provider) => {
  describe("stale sweep on a per-second cron", () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startServer(provider, {
        realClock: true,
        scheduler: true,
        config: { STALE_SWEEP_CRON: "* * * * * *", CRAWL_TZ: middayTimeZone() },
      });
    });
    afterAll(() => s?.close());

    it("a keyword whose heartbeat is older than staleAfterSeconds becomes PARTIAL, and resumes at the next page", async () => {
      await s.ok(`mutation { updateSource(id: "qcwy", input: { staleAfterSeconds: 1 }) { id } }`);
      await s.importKeywords("qcwy", ["深圳"], ["前端"]);
      const [c] = (await s.ok(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "dies", limit: 1 }, s.tokens.spider)).claimKeywords;
      await s.ok(ReportPageProgressDocument, { input: { keywordId: c!.keyword.id, leaseToken: c!.leaseToken, page: 1, jobsFound: 9 } }, s.tokens.spider);
      // The spider dies here. Within a few sweeps (one per second) the keyword is PARTIAL.
      const status = await until("PARTIAL", async () => {
        const d = await s.ok(`query($id: ID!) { keyword(id: $id) { status } }`, { id: c!.keyword.id });
        return d.keyword.status === "PARTIAL" ? d.keyword.status : undefined;
      });
      expect(status).toBe("PARTIAL");
      const events = await s.ok(`query($id: ID!) { keyword(id: $id) { events { from to reason } } }`, { id: c!.keyword.id });
      expect(events.keyword.events[0]).toEqual({ from: "CRAWLING", to: "PARTIAL", reason: "stale" });
      const [r] = (await s.ok(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "second", limit: 1 }, s.tokens.spider)).claimKeywords;
      expect(r).toMatchObject({ startPage: 2, resumed: true, keyword: { id: c!.keyword.id, jobsFound: 9 } });
      // /metrics counts the cron's runs and what the sweeps changed.
      const metrics = await (await fetch(s.app.url("/metrics"))).text();
      expect(metrics).toMatch(/crawl_job_runs_total\{job="stale-sweep",outcome="ok"\} [1-9]/);
      expect(metrics).toContain('crawl_sweep_keywords_total{job="stale",source="qcwy"} 1');
      expect(metrics).toMatch(/crawl_job_last_run_keywords\{job="stale-sweep"\} [01]/);
    });
  });

  describe("day rollover", () => {
    // 23:59:00 on 2026-11-29 in Asia/Shanghai.
    const clock = new ManualClock(new Date("2026-11-29T15:59:00Z"));
    let s: TestServer;
    beforeAll(async () => {
      s = await startServer(provider, { clock });
    });
    afterAll(() => s?.close());

    it("makes every keyword IDLE at midnight in CRAWL_TZ, and the new day starts fresh", async () => {
      await s.importKeywords("boss", ["a", "b", "c", "d"], ["rollover"]);
      const claims = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "night", limit: 4 }, s.tokens.spider)).claimKeywords;
      const [done, failed, partial] = claims;
      const spider = s.tokens.spider;
      for (const p of [1, 2, 3]) {
        await s.ok(ReportPageProgressDocument, { input: { keywordId: done!.keyword.id, leaseToken: done!.leaseToken, page: p, jobsFound: 5 } }, spider);
      }
      await s.ok(`mutation($i: ReportCrawlCompleteInput!) { reportCrawlComplete(input: $i) { id } }`,
        { i: { keywordId: failed!.keyword.id, leaseToken: failed!.leaseToken, status: "FAILED", errorMessage: "ban" } }, spider);
      await s.ok(`mutation($id: ID!, $l: String!) { releaseKeyword(keywordId: $id, leaseToken: $l) { id } }`,
        { id: partial!.keyword.id, l: partial!.leaseToken }, spider);
      const evening = (await s.ok(STATS, { s: "boss" })).stats;
      expect(evening).toMatchObject({ date: "2026-11-29", used: 4, jobsFound: 15, pagesCrawled: 3,
        byStatus: { idle: 0, crawling: 1, completed: 1, failed: 1, partial: 1 } });

      const sub = s.ws();
      const seen: any[] = [];
      const stop = sub.subscribe(
        { query: `subscription { crawlStatusDistribution(source: "boss") { date byStatus { idle crawling completed failed partial } } }` },
        { next: (m) => seen.push(m.data?.crawlStatusDistribution), error: () => {}, complete: () => {} },
      );
      await until("first distribution", async () => (seen.length ? true : undefined));

      clock.advance(2 * 60_000); // 00:01 on the 30th
      // Even before any job runs, reads say IDLE: the day turned.
      const morning = (await s.ok(STATS, { s: "boss" })).stats;
      expect(morning).toMatchObject({ date: "2026-11-30", used: 0, unused: 4, jobsFound: 0, pagesCrawled: 0,
        byStatus: { idle: 4, crawling: 0, completed: 0, failed: 0, partial: 0 } });
      const list = await s.ok(`{ keywords(source: "boss") { edges { node { status lastCompletedPage jobsFound retryCount } } } }`);
      expect(list.keywords.edges.every((e: any) => e.node.status === "IDLE" && e.node.jobsFound === 0)).toBe(true);

      // The job writes it down and tells subscribers.
      expect(await s.app.runJob("day-rollover")).toBe(4);
      const rows = await s.app.services.database.reader.keyword.findMany({ where: { sourceId: "boss" } });
      expect(rows.every((r) => r.status === "IDLE")).toBe(true);
      const rollovers = await s.app.services.database.reader.crawlEvent.findMany({ where: { reason: "rollover" } });
      expect(rollovers.map((e) => e.from).sort()).toEqual(["COMPLETED", "CRAWLING", "FAILED", "PARTIAL"]);
      await until("distribution of the new day", async () =>
        seen.some((d) => d?.date === "2026-11-30" && d.byStatus.idle === 4) ? true : undefined);
      stop();

      // Yesterday's lease is gone; the keyword is claimed afresh from page 1.
      const late = await s.request(ReportPageProgressDocument,
        { input: { keywordId: claims[3]!.keyword.id, leaseToken: claims[3]!.leaseToken, page: 1, jobsFound: 1 } }, { token: spider });
      expect(late.errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
      const fresh = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "morning", limit: 4 }, spider)).claimKeywords;
      expect(fresh).toHaveLength(4);
      expect(fresh.every((c) => c.startPage === 1 && !c.resumed && c.keyword.retryCount === 0 && c.keyword.jobsFound === 0)).toBe(true);

      // Yesterday is still answerable, from its page reports and events.
      const yesterday = (await s.ok(STATS, { s: "boss", d: "2026-11-29" })).stats;
      expect(yesterday).toMatchObject({ jobsFound: 15, pagesCrawled: 3,
        byStatus: { completed: 1, failed: 1, partial: 1, crawling: 1 } });
    });
  });
});
