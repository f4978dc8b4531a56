// The dashboard's reads (viewer, transitions, activity, completion, crawlers) and the operator
// actions (force release, retry, updateSource) through the real server, on both databases.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ClaimKeywordsDocument, ReportCrawlCompleteDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { snapshot, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const MINUTE = 60_000;

describe.each(await testProviders())("dashboard reads and operator actions on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  const claim = async (source: string, crawlerId: string) => {
    const d = await s.ok(ClaimKeywordsDocument, { source, crawlerId, limit: 1 }, s.tokens.spider);
    expect(d.claimKeywords).toHaveLength(1);
    return d.claimKeywords[0]!;
  };
  const report = (keywordId: string, leaseToken: string, page: number, jobsFound: number) =>
    s.ok(ReportPageProgressDocument, { input: { keywordId, leaseToken, page, jobsFound } }, s.tokens.spider);
  const fail = (keywordId: string, leaseToken: string) =>
    s.ok(ReportCrawlCompleteDocument, { input: { keywordId, leaseToken, status: "FAILED", errorMessage: "banned" } }, s.tokens.spider);

  it("viewer: the token's role and name, nulls without a token, even when reads need a token", async () => {
    const q = `{ viewer { role name } }`;
    expect((await s.ok(q, {}, s.tokens.admin)).viewer).toEqual({ role: "ADMIN", name: "test-admin" });
    expect((await s.ok(q, {}, s.tokens.viewer)).viewer).toEqual({ role: "VIEWER", name: "test-viewer" });
    expect((await s.ok(q, {}, null)).viewer).toEqual({ role: null, name: null });
    const closed = await startServer(provider, { config: { PUBLIC_READS: false } });
    try {
      expect((await closed.ok(q, {}, null)).viewer).toEqual({ role: null, name: null });
      expect(await closed.code(`{ sources { id } }`, {}, null)).toBe("UNAUTHENTICATED");
    } finally {
      await closed.close();
    }
  });

  it("crawlDay: today in CRAWL_TZ and when it began", async () => {
    // The harness clock: 2026-11-29T02:00Z is 10:00 in Asia/Shanghai.
    expect((await s.ok(`{ crawlDay { date startsAt timeZone } }`)).crawlDay).toEqual({
      date: "2026-11-29",
      startsAt: "2026-11-28T16:00:00.000Z",
      timeZone: "Asia/Shanghai",
    });
  });

  it("a day of activity: transition counts, pages per minute, completion and the fleet", async () => {
    await s.importKeywords("zhilian", ["a", "b", "c"], ["dev"]);
    const start = s.clock.now();
    const k1 = await claim("zhilian", "spider-1");
    await report(k1.keyword.id, k1.leaseToken, 1, 10);
    await report(k1.keyword.id, k1.leaseToken, 2, 5);
    s.clock.advance(MINUTE);
    const k2 = await claim("zhilian", "spider-2");
    await report(k2.keyword.id, k2.leaseToken, 1, 7);
    await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: k1.keyword.id, leaseToken: k1.leaseToken, status: "COMPLETED" } }, s.tokens.spider);
    s.clock.advance(MINUTE);
    const k3 = await claim("zhilian", "spider-1");
    await fail(k3.keyword.id, k3.leaseToken);

    const t = await s.ok(`{ transitionCounts(source: "zhilian") { from to count } }`);
    const counts = Object.fromEntries(t.transitionCounts.map((c: any) => [`${c.from}>${c.to}`, c.count]));
    expect(counts).toEqual({ "IDLE>CRAWLING": 3, "CRAWLING>COMPLETED": 1, "CRAWLING>FAILED": 1 });
    expect((await s.ok(`{ transitionCounts(source: "boss") { count } }`)).transitionCounts).toEqual([]);

    const a = await s.ok(`{ pageActivity(source: "zhilian", minutes: 5) { at pages jobsFound } }`);
    expect(a.pageActivity).toHaveLength(5);
    const minute = (d: Date) => new Date(Math.floor(d.getTime() / MINUTE) * MINUTE).toISOString();
    expect(a.pageActivity.at(-1).at).toBe(minute(s.clock.now()));
    const byAt = Object.fromEntries(a.pageActivity.map((p: any) => [p.at, [p.pages, p.jobsFound]]));
    expect(byAt[minute(start)]).toEqual([2, 15]);
    expect(byAt[minute(new Date(start.getTime() + MINUTE))]).toEqual([1, 7]);
    expect(a.pageActivity.reduce((n: number, p: any) => n + p.pages, 0)).toBe(3);

    const c = await s.ok(`{ completionSeries(source: "zhilian") { at completed } }`);
    expect(c.completionSeries).toEqual([{ at: minute(new Date(start.getTime() + MINUTE)), completed: 1 }]);

    const fleet = `{ crawlers { id sources holding { id city } lastHeartbeatAt pagesPerMinute } }`;
    const f = await s.ok(fleet);
    expect(f.crawlers).toEqual([
      { id: "spider-1", sources: ["zhilian"], holding: [], lastHeartbeatAt: s.clock.now().toISOString(), pagesPerMinute: 0.4 },
      {
        id: "spider-2",
        sources: ["zhilian"],
        holding: [{ id: k2.keyword.id, city: k2.keyword.city }],
        lastHeartbeatAt: new Date(start.getTime() + MINUTE).toISOString(),
        pagesPerMinute: 0.2,
      },
    ]);

    // After the first read the server keeps what it read; what happens next must still show.
    s.clock.advance(3 * MINUTE);
    await s.importKeywords("zhilian", ["d", "e"], ["dev"]);
    const k4 = await claim("zhilian", "spider-3");
    // spider-4 only claims and fails: no page, nothing held; only the change bus can show it.
    const k5 = await claim("zhilian", "spider-4");
    await fail(k5.keyword.id, k5.leaseToken);
    await report(k4.keyword.id, k4.leaseToken, 1, 4);
    await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: k4.keyword.id, leaseToken: k4.leaseToken, status: "COMPLETED" } }, s.tokens.spider);
    const later = await s.ok(`{ pageActivity(source: "zhilian", minutes: 6) { at pages jobsFound } completionSeries(source: "zhilian") { at completed } }`);
    expect(later.pageActivity.map((p: any) => [p.at, p.pages, p.jobsFound])).toEqual(
      [5, 4, 3, 2, 1, 0].map((ago) => {
        const at = minute(new Date(s.clock.now().getTime() - ago * MINUTE));
        const was = byAt[at] ?? [0, 0];
        return [at, ...(ago === 0 ? [1, 4] : was)];
      }),
    );
    expect(later.completionSeries).toEqual([
      { at: minute(new Date(start.getTime() + MINUTE)), completed: 1 },
      { at: minute(s.clock.now()), completed: 2 },
    ]);
    // A reset of a COMPLETED keyword takes it back out of the curve.
    await s.ok(`mutation($id: ID!) { resetKeyword(id: $id) { id } }`, { id: k4.keyword.id });
    expect((await s.ok(`{ completionSeries(source: "zhilian") { completed } }`)).completionSeries.at(-1)).toEqual({ completed: 1 });
    // spider-4 first appeared after the fleet was read, with no page and nothing held.
    await vi.waitFor(async () =>
      expect((await s.ok(fleet)).crawlers.map((c: any) => c.id)).toEqual(["spider-3", "spider-4", "spider-1", "spider-2"]),
    );
  });

  it("forceReleaseKeyword: CRAWLING → PARTIAL; the crawler's late report is LEASE_LOST; the next claim resumes", async () => {
    await s.importKeywords("qcwy", ["force"], ["release"]);
    const c = await claim("qcwy", "spider-hung");
    await report(c.keyword.id, c.leaseToken, 1, 3);
    const q = `mutation($id: ID!) { forceReleaseKeyword(id: $id) { status lastCompletedPage } }`;
    expect(await s.code(q, { id: c.keyword.id }, s.tokens.spider)).toBe("FORBIDDEN");
    expect(await s.code(q, { id: c.keyword.id }, s.tokens.viewer)).toBe("FORBIDDEN");
    expect((await s.ok(q, { id: c.keyword.id })).forceReleaseKeyword).toEqual({ status: "PARTIAL", lastCompletedPage: 1 });
    const late = await s.request(ReportPageProgressDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: 2, jobsFound: 1 } }, { token: s.tokens.spider });
    expect(late.errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
    // Not CRAWLING any more: a second force release changes nothing.
    const before = await snapshot(s);
    expect(await s.code(q, { id: c.keyword.id })).toBe("INVALID_TRANSITION");
    expect(await snapshot(s)).toEqual(before);
    const again = await claim("qcwy", "spider-new");
    expect(again).toMatchObject({ startPage: 2, resumed: true });
    const events = await s.ok(`query($id: ID!) { keyword(id: $id) { events { from to reason } } }`, { id: c.keyword.id });
    expect(events.keyword.events.map((e: any) => e.reason)).toEqual(["resume", "released by operator", "claim"]);
  });

  it("retryKeyword: a FAILED keyword without retries left → PARTIAL, claimed next", async () => {
    await s.ok(`mutation { updateSource(id: "boss", input: { maxRetries: 0 }) { maxRetries } }`);
    await s.importKeywords("boss", ["retry"], ["me"]);
    const c = await claim("boss", "spider-r");
    await report(c.keyword.id, c.leaseToken, 1, 4);
    await fail(c.keyword.id, c.leaseToken);
    expect(await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "spider-r", limit: 1 }, s.tokens.spider)).toEqual({ claimKeywords: [] });
    const q = `mutation($id: ID!) { retryKeyword(id: $id) { status errorMessage retryCount } }`;
    expect(await s.code(q, { id: c.keyword.id }, s.tokens.viewer)).toBe("FORBIDDEN");
    expect((await s.ok(q, { id: c.keyword.id })).retryKeyword).toEqual({ status: "PARTIAL", errorMessage: "", retryCount: 0 });
    expect(await s.code(q, { id: c.keyword.id })).toBe("INVALID_TRANSITION");
    expect(await s.code(q, { id: "999999" })).toBe("NOT_FOUND");
    const again = await claim("boss", "spider-r");
    expect(again).toMatchObject({ startPage: 2, keyword: { id: c.keyword.id } });
    await s.ok(`mutation { updateSource(id: "boss", input: { maxRetries: 3 }) { maxRetries } }`);
  });

  it("the dashboard's reads refuse bad input with a code and unknown sources with NOT_FOUND", async () => {
    expect(await s.code(`{ pageActivity(source: "boss", minutes: 0) { at } }`)).toBe("BAD_USER_INPUT");
    expect(await s.code(`{ pageActivity(source: "boss", minutes: 100000) { at } }`)).toBe("BAD_USER_INPUT");
    expect(await s.code(`{ transitionCounts(source: "boss", date: "yesterday") { count } }`)).toBe("BAD_USER_INPUT");
    expect(await s.code(`{ transitionCounts(source: "nope") { count } }`)).toBe("NOT_FOUND");
    expect(await s.code(`{ crawlers(source: "nope") { id } }`)).toBe("NOT_FOUND");
    expect(await s.code(`{ completionSeries(source: "nope") { at } }`)).toBe("NOT_FOUND");
  });
});
