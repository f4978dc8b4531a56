// Claims through the real server: atomic under concurrency, in priority order, resumable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClaimKeywordsDocument,
  ReleaseKeywordDocument,
  ReportCrawlCompleteDocument,
  ReportPageProgressDocument,
} from "../../spiders/src/gql/graphql.ts";
import { cities, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

describe.each(await testProviders())("claims on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  const claim = (crawlerId: string, limit = 1, source = "boss") =>
    s.ok(ClaimKeywordsDocument, { source, crawlerId, limit }, s.tokens.spider).then((d) => d.claimKeywords);

  it("50 concurrent clients claiming from 50 keywords get 50 distinct keywords; the 51st gets none", async () => {
    expect(await s.importKeywords("zhilian", cities(50), ["Java"])).toEqual({ created: 50, existing: 0 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.ok(ClaimKeywordsDocument, { source: "zhilian", crawlerId: `spider-${i}`, limit: 1 }, s.tokens.spider),
      ),
    );
    const ids = results.map((r) => {
      expect(r.claimKeywords).toHaveLength(1);
      return r.claimKeywords[0]!.keyword.id;
    });
    expect(new Set(ids).size).toBe(50);
    const tokens = results.map((r) => r.claimKeywords[0]!.leaseToken);
    expect(new Set(tokens).size).toBe(50);
    expect(await claim("spider-51", 1, "zhilian")).toEqual([]);

    // The log agrees: exactly one IDLE → CRAWLING per keyword, each by a different crawler.
    const events = await s.app.services.database.reader.crawlEvent.findMany({ where: { sourceId: "zhilian" } });
    expect(events).toHaveLength(50);
    expect(new Set(events.map((e) => e.keywordId)).size).toBe(50);
    expect(new Set(events.map((e) => e.crawlerId)).size).toBe(50);
  });

  it("a claim with a limit takes several keywords at once, least recently requested first", async () => {
    await s.importKeywords("qcwy", ["北京", "上海", "广州"], ["Go"]);
    const batch = await claim("batcher", 2, "qcwy");
    expect(batch.map((c) => c.keyword.city)).toEqual(["北京", "上海"]);
    expect(batch.every((c) => c.startPage === 1 && !c.resumed && c.keyword.status === "CRAWLING")).toBe(true);
  });

  it("resume: a released keyword is claimed first, at lastCompletedPage + 1, with resumed: true", async () => {
    await s.importKeywords("boss", ["杭州", "南京"], ["Python"]);
    const [first] = await claim("a");
    const id = first!.keyword.id;
    for (const page of [1, 2]) {
      await s.ok(ReportPageProgressDocument, {
        input: { keywordId: id, leaseToken: first!.leaseToken, page, jobsFound: 10 },
      }, s.tokens.spider);
    }
    const released = await s.ok(ReleaseKeywordDocument, { keywordId: id, leaseToken: first!.leaseToken }, s.tokens.spider);
    expect(released.releaseKeyword.status).toBe("PARTIAL");

    const [again] = await claim("b");
    expect(again!.keyword.id).toBe(id); // PARTIAL before the fresh keyword
    expect(again!.startPage).toBe(3);
    expect(again!.resumed).toBe(true);
    expect(again!.keyword.jobsFound).toBe(20);
    expect(again!.leaseToken).not.toBe(first!.leaseToken);
  });

  it("priority: PARTIAL, then FAILED with retries left, then fresh", async () => {
    await s.importKeywords("boss", ["p1", "p2", "p3"], ["prio"]);
    // Take the three prio keywords plus whatever else is fresh, then arrange their states.
    const taken = await claim("arranger", 10);
    const byCity = Object.fromEntries(taken.map((c) => [c.keyword.city, c]));
    const failed = byCity.p1!;
    const partial = byCity.p2!;
    const fresh = byCity.p3!;
    await s.ok(ReportCrawlCompleteDocument, {
      input: { keywordId: failed.keyword.id, leaseToken: failed.leaseToken, status: "FAILED", errorMessage: "HTTP 503" },
    }, s.tokens.spider);
    await s.ok(ReleaseKeywordDocument, { keywordId: partial.keyword.id, leaseToken: partial.leaseToken }, s.tokens.spider);
    await s.ok(ReportCrawlCompleteDocument, {
      input: { keywordId: fresh.keyword.id, leaseToken: fresh.leaseToken, status: "COMPLETED" },
    }, s.tokens.spider);
    // The rest of today's boss keywords are now held (CRAWLING) or done; only p2 and p1 are claimable.
    const order = [(await claim("x"))[0], (await claim("y"))[0]];
    expect(order.map((c) => c?.keyword.city)).toEqual(["p2", "p1"]);
    expect(order[1]!.keyword.retryCount).toBe(1);
    expect(await claim("z")).toEqual([]);
  });
});

describe.each(await testProviders())("claim order when a candidate finishes on the spot, on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  it("keeps taking PARTIAL keywords before fresh ones", async () => {
    await s.importKeywords("boss", ["done-by-now", "resumable", "fresh"], ["order"]);
    const spider = s.tokens.spider;
    const take = async (crawlerId: string) => (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId, limit: 1 }, spider)).claimKeywords[0]!;
    const [first, second] = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "two", limit: 2 }, spider)).claimKeywords;
    expect([first!.keyword.city, second!.keyword.city]).toEqual(["done-by-now", "resumable"]);
    for (const [c, pages] of [[first!, 2], [second!, 1]] as const) {
      for (let page = 1; page <= pages; page++) {
        await s.ok(ReportPageProgressDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, jobsFound: 1 } }, spider);
      }
      await s.ok(ReleaseKeywordDocument, { keywordId: c.keyword.id, leaseToken: c.leaseToken }, spider);
    }
    // Two pages is now everything: "done-by-now" has nothing left and completes during the claim.
    await s.ok(`mutation { updateSource(id: "boss", input: { maxPages: 2 }) { id } }`);
    const next = await take("after");
    expect(next).toMatchObject({ startPage: 2, resumed: true, keyword: { city: "resumable" } });
    const done = await s.ok(`{ keywords(source: "boss", search: "done-by-now") { edges { node { status } } } }`);
    expect(done.keywords.edges[0].node.status).toBe("COMPLETED");
  });
});
