// Page reports, completion, failure and retries through the real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClaimKeywordsDocument,
  HeartbeatDocument,
  ReleaseKeywordDocument,
  ReportCrawlCompleteDocument,
  ReportPageProgressDocument,
} from "../../spiders/src/gql/graphql.ts";
import { ageHeartbeat, snapshot, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

describe.each(await testProviders())("reports on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  const claimOne = async (source: string, crawlerId = "spider-a") => {
    const d = await s.ok(ClaimKeywordsDocument, { source, crawlerId, limit: 1 }, s.tokens.spider);
    expect(d.claimKeywords).toHaveLength(1);
    return d.claimKeywords[0]!;
  };
  const report = (keywordId: string, leaseToken: string, page: number, jobsFound: number, totalPages?: number) =>
    s.request(ReportPageProgressDocument, { input: { keywordId, leaseToken, page, jobsFound, totalPages } }, { token: s.tokens.spider });

  it("a page reported twice counts once (jobsFound is the sum over distinct pages)", async () => {
    await s.importKeywords("qcwy", ["成都"], ["测试"]);
    const c = await claimOne("qcwy");
    const id = c.keyword.id;
    expect((await report(id, c.leaseToken, 1, 20, 5)).data?.reportPageProgress.jobsFound).toBe(20);
    // The answer was lost, the spider retries page 1: no double count.
    const again = await report(id, c.leaseToken, 1, 20, 5);
    expect(again.data?.reportPageProgress).toMatchObject({ jobsFound: 20, pagesCrawled: 1, lastCompletedPage: 1 });
    const p2 = await report(id, c.leaseToken, 2, 7, 5);
    expect(p2.data?.reportPageProgress).toMatchObject({ jobsFound: 27, pagesCrawled: 2, lastCompletedPage: 2, totalPages: 5 });
    const stats = await s.ok(`{ stats(source: "qcwy") { jobsFound pagesCrawled } }`);
    expect(stats.stats).toEqual({ jobsFound: 27, pagesCrawled: 2 });
    const reports = await s.app.services.database.reader.pageReport.findMany({ where: { keywordId: Number(id) }, orderBy: { page: "asc" } });
    expect(reports.map((r) => [r.page, r.jobsFound])).toEqual([
      [1, 20],
      [2, 7],
    ]);
  });

  it("the same page reported by 20 concurrent retries is stored and counted once", async () => {
    await s.importKeywords("qcwy", ["重庆"], ["并发"]);
    const c = await claimOne("qcwy");
    const results = await Promise.all(Array.from({ length: 20 }, () => report(c.keyword.id, c.leaseToken, 1, 17)));
    expect(results.every((r) => !r.errors)).toBe(true);
    const kw = await s.app.services.database.reader.keyword.findUniqueOrThrow({ where: { id: Number(c.keyword.id) } });
    expect(kw).toMatchObject({ jobsFound: 17, pagesCrawled: 1, lastCompletedPage: 1 });
    expect(await s.app.services.database.reader.pageReport.count({ where: { keywordId: kw.id } })).toBe(1);
  });

  it("a reset keyword starts the day over: old pages are forgotten, the old lease is LEASE_LOST", async () => {
    await s.importKeywords("qcwy", ["reset-city"], ["reset-job"]);
    const a = await claimOne("qcwy");
    await report(a.keyword.id, a.leaseToken, 1, 10);
    await report(a.keyword.id, a.leaseToken, 2, 10);
    const reset = await s.ok(`mutation($id: ID!) { resetKeyword(id: $id) { status jobsFound lastCompletedPage } }`, { id: a.keyword.id });
    expect(reset.resetKeyword).toEqual({ status: "IDLE", jobsFound: 0, lastCompletedPage: 0 });
    expect((await report(a.keyword.id, a.leaseToken, 3, 1)).errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
    const b = await claimOne("qcwy");
    expect(b).toMatchObject({ startPage: 1, resumed: false, keyword: { id: a.keyword.id } });
    expect((await report(b.keyword.id, b.leaseToken, 1, 3)).data?.reportPageProgress).toMatchObject({ jobsFound: 3, pagesCrawled: 1 });
  });

  it("reaching the last page completes the keyword: min(totalPages, maxPages)", async () => {
    await s.importKeywords("zhilian", ["西安"], ["运维"]);
    const c = await claimOne("zhilian");
    await report(c.keyword.id, c.leaseToken, 1, 30, 2);
    const last = await report(c.keyword.id, c.leaseToken, 2, 12, 2);
    expect(last.data?.reportPageProgress).toMatchObject({ status: "COMPLETED", lastCompletedPage: 2, jobsFound: 42 });
    // maxPages caps an unknown or larger total: boss has 3.
    await s.importKeywords("boss", ["武汉"], ["产品"]);
    const b = await claimOne("boss");
    await report(b.keyword.id, b.leaseToken, 1, 15);
    await report(b.keyword.id, b.leaseToken, 2, 15);
    expect((await report(b.keyword.id, b.leaseToken, 3, 15, 40)).data?.reportPageProgress.status).toBe("COMPLETED");
  });

  it("a spider may complete early (the site ran out of results); a retried completion is accepted once", async () => {
    await s.importKeywords("qcwy", ["厦门"], ["销售"]);
    const c = await claimOne("qcwy");
    await report(c.keyword.id, c.leaseToken, 1, 3);
    const input = { keywordId: c.keyword.id, leaseToken: c.leaseToken, status: "COMPLETED" as const };
    const done = await s.ok(ReportCrawlCompleteDocument, { input }, s.tokens.spider);
    expect(done.reportCrawlComplete).toMatchObject({ status: "COMPLETED", lastCompletedPage: 1 });
    const before = await snapshot(s);
    const replay = await s.ok(ReportCrawlCompleteDocument, { input }, s.tokens.spider);
    expect(replay.reportCrawlComplete.status).toBe("COMPLETED");
    expect(await snapshot(s)).toEqual(before);
  });

  it("a late report after the lease moved to another spider is refused with LEASE_LOST and changes nothing", async () => {
    await s.importKeywords("qcwy", ["青岛"], ["物流"]);
    const a = await claimOne("qcwy", "spider-a");
    await report(a.keyword.id, a.leaseToken, 1, 10);
    // spider-a goes quiet; the keyword is swept to PARTIAL and spider-b resumes it.
    await ageHeartbeat(s, a.keyword.id, 3600);
    expect(await s.app.runJob("stale-sweep")).toBeGreaterThanOrEqual(1);
    const b = await claimOne("qcwy", "spider-b");
    expect(b.keyword.id).toBe(a.keyword.id);
    expect(b.startPage).toBe(2);

    const before = await snapshot(s);
    for (const r of [
      await report(a.keyword.id, a.leaseToken, 2, 99),
      await s.request(HeartbeatDocument, { keywordId: a.keyword.id, leaseToken: a.leaseToken }, { token: s.tokens.spider }),
      await s.request(ReleaseKeywordDocument, { keywordId: a.keyword.id, leaseToken: a.leaseToken }, { token: s.tokens.spider }),
      await s.request(
        ReportCrawlCompleteDocument,
        { input: { keywordId: a.keyword.id, leaseToken: a.leaseToken, status: "COMPLETED" } },
        { token: s.tokens.spider },
      ),
    ]) {
      expect(r.errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
    }
    expect(await snapshot(s)).toEqual(before);
    // spider-b is unaffected.
    expect((await report(b.keyword.id, b.leaseToken, 2, 5)).data?.reportPageProgress.crawlerId).toBe("spider-b");
  });

  it("a swept keyword's own spider also gets LEASE_LOST before anyone re-claims it", async () => {
    await s.importKeywords("zhilian", ["长沙"], ["设计"]);
    const a = await claimOne("zhilian");
    await ageHeartbeat(s, a.keyword.id, 3600);
    await s.app.runJob("stale-sweep");
    expect((await report(a.keyword.id, a.leaseToken, 1, 1)).errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
  });

  it("FAILED is retried up to maxRetries times, then no longer offered", async () => {
    await s.ok(`mutation { updateSource(id: "boss", input: { maxRetries: 2 }) { maxRetries } }`);
    await s.importKeywords("boss", ["fail-city"], ["fail-job"]);
    // Finish every other boss keyword so only fail-city is claimable.
    for (;;) {
      const d = await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "drain", limit: 10 }, s.tokens.spider);
      const others = d.claimKeywords.filter((c) => c.keyword.city !== "fail-city");
      for (const c of others) {
        await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, status: "COMPLETED" } }, s.tokens.spider);
      }
      const mine = d.claimKeywords.find((c) => c.keyword.city === "fail-city");
      if (mine) {
        await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: mine.keyword.id, leaseToken: mine.leaseToken, status: "FAILED", errorMessage: "captcha" } }, s.tokens.spider);
        break;
      }
    }
    const retries: number[] = [];
    for (;;) {
      const d = await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "retrier", limit: 1 }, s.tokens.spider);
      if (d.claimKeywords.length === 0) break;
      const c = d.claimKeywords[0]!;
      expect(c.keyword.city).toBe("fail-city");
      retries.push(c.keyword.retryCount);
      await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, status: "FAILED", errorMessage: `attempt ${retries.length + 1}` } }, s.tokens.spider);
      if (retries.length > 5) throw new Error("retried forever");
    }
    expect(retries).toEqual([1, 2]);
    const kw = await s.ok(`{ keywords(source: "boss", search: "fail-city") { edges { node { status retryCount errorMessage } } } }`);
    expect(kw.keywords.edges[0].node).toEqual({ status: "FAILED", retryCount: 2, errorMessage: "attempt 3" });
  });

  it("a heartbeat keeps a slow page's lease past staleAfterSeconds", async () => {
    await s.ok(`mutation { updateSource(id: "zhilian", input: { staleAfterSeconds: 60 }) { id } }`);
    await s.importKeywords("zhilian", ["slow"], ["page"]);
    const c = await claimOne("zhilian");
    for (let i = 0; i < 3; i++) {
      s.clock.advance(45_000);
      await s.ok(HeartbeatDocument, { keywordId: c.keyword.id, leaseToken: c.leaseToken }, s.tokens.spider);
      await s.app.runJob("stale-sweep");
    }
    // 135 s since the claim, but never 60 s without a heartbeat: still ours.
    expect((await report(c.keyword.id, c.leaseToken, 1, 4)).data?.reportPageProgress.status).toBe("CRAWLING");
    s.clock.advance(61_000);
    await s.app.runJob("stale-sweep");
    expect((await report(c.keyword.id, c.leaseToken, 2, 4)).errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
  });
});
