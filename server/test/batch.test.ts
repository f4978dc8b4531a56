// Batch mutations (reportPagesProgress, reportCrawlsComplete) through the real server: one
// transaction per batch, per-item results with typed codes, idempotent replays, bad input refused
// whole, concurrent batches over the same keywords in opposite orders, and a completion with the
// next claim in one request (the SDK's CompleteAndClaim / CompleteManyAndClaim).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompleteAndClaimDocument, CompleteManyAndClaimDocument } from "../../spiders/src/gql/graphql.ts";
import { startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const CLAIM = `mutation($s: ID!, $c: String!, $n: Int!) { claimKeywords(source: $s, crawlerId: $c, limit: $n) { keyword { id } leaseToken } }`;
const REPORTS = `mutation($i: [ReportPageProgressInput!]!) { reportPagesProgress(inputs: $i) {
  keywordId keyword { id status jobsFound pagesCrawled lastCompletedPage } error { code message } } }`;
const COMPLETES = `mutation($i: [ReportCrawlCompleteInput!]!) { reportCrawlsComplete(inputs: $i) {
  keywordId keyword { id status errorMessage } error { code message } } }`;

type Lease = { keyword: { id: string }; leaseToken: string };

describe.each(await testProviders())("batch mutations on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  const claim = async (source: string, n: number, crawlerId = "batcher"): Promise<Lease[]> =>
    (await s.ok(CLAIM, { s: source, c: crawlerId, n }, s.tokens.spider)).claimKeywords;
  const reports = (inputs: object[]) => s.request(REPORTS, { i: inputs }, { token: s.tokens.spider });
  const completes = (inputs: object[]) => s.request(COMPLETES, { i: inputs }, { token: s.tokens.spider });
  const keyword = (id: string) => s.app.services.database.reader.keyword.findUniqueOrThrow({ where: { id: Number(id) } });
  const events = (id: string) => s.app.services.database.reader.crawlEvent.count({ where: { keywordId: Number(id) } });

  it("reports pages of several keywords in one call; a refused item changes nothing, the rest commit", async () => {
    await s.importKeywords("qcwy", ["b1", "b2", "b3"], ["batch"]);
    const [a, b, c] = await claim("qcwy", 3);
    const before = await keyword(c!.keyword.id);
    const r = await reports([
      { keywordId: a!.keyword.id, leaseToken: a!.leaseToken, page: 1, totalPages: 3, jobsFound: 10 },
      { keywordId: b!.keyword.id, leaseToken: b!.leaseToken, page: 1, totalPages: 3, jobsFound: 5 },
      { keywordId: a!.keyword.id, leaseToken: a!.leaseToken, page: 2, totalPages: 3, jobsFound: 7 },
      { keywordId: c!.keyword.id, leaseToken: "not-the-lease", page: 1, jobsFound: 99 },
      { keywordId: "999999", leaseToken: "x", page: 1, jobsFound: 1 },
    ]);
    expect(r.errors).toBeUndefined();
    const items = r.data.reportPagesProgress;
    expect(items.map((i: any) => i.keywordId)).toEqual([a!.keyword.id, b!.keyword.id, a!.keyword.id, c!.keyword.id, "999999"]);
    expect(items[0].keyword).toMatchObject({ jobsFound: 10, pagesCrawled: 1, status: "CRAWLING" });
    expect(items[2].keyword).toMatchObject({ jobsFound: 17, pagesCrawled: 2, lastCompletedPage: 2 });
    expect(items[1].keyword).toMatchObject({ jobsFound: 5, pagesCrawled: 1 });
    expect(items[3]).toMatchObject({ keyword: null, error: { code: "LEASE_LOST" } });
    expect(items[4]).toMatchObject({ keyword: null, error: { code: "NOT_FOUND" } });
    expect(await keyword(c!.keyword.id)).toEqual(before);
    const stats = await s.ok(`{ stats(source: "qcwy") { jobsFound pagesCrawled } }`);
    expect(stats.stats).toEqual({ jobsFound: 22, pagesCrawled: 3 });
  });

  it("completes several keywords in one call, and a replayed batch is answered without writing", async () => {
    await s.importKeywords("zhilian", ["c1", "c2"], ["batch"]);
    const [a, b] = await claim("zhilian", 2);
    const inputs = [
      { keywordId: a!.keyword.id, leaseToken: a!.leaseToken, status: "COMPLETED" },
      { keywordId: b!.keyword.id, leaseToken: b!.leaseToken, status: "FAILED", errorMessage: "blocked" },
    ];
    const first = await completes(inputs);
    expect(first.errors).toBeUndefined();
    expect(first.data.reportCrawlsComplete.map((i: any) => [i.keyword.status, i.error])).toEqual([
      ["COMPLETED", null],
      ["FAILED", null],
    ]);
    const eventsBefore = [await events(a!.keyword.id), await events(b!.keyword.id)];
    const rowsBefore = [await keyword(a!.keyword.id), await keyword(b!.keyword.id)];
    // The answer was lost; the spider sends the same batch again.
    const again = await completes(inputs);
    expect(again.data.reportCrawlsComplete.map((i: any) => [i.keyword.status, i.error])).toEqual([
      ["COMPLETED", null],
      ["FAILED", null],
    ]);
    expect([await events(a!.keyword.id), await events(b!.keyword.id)]).toEqual(eventsBefore);
    expect([await keyword(a!.keyword.id), await keyword(b!.keyword.id)]).toEqual(rowsBefore);
    // Completing a FAILED keyword as COMPLETED is not a replay.
    const wrong = await completes([{ ...inputs[1], status: "COMPLETED" }]);
    expect(wrong.data.reportCrawlsComplete[0].error.code).toBe("INVALID_TRANSITION");
  });

  it("a replayed batch of page reports whose last page completed the keyword changes nothing", async () => {
    await s.importKeywords("boss", ["r1"], ["batch"]);
    const [a] = await claim("boss", 1);
    const inputs = [1, 2].map((page) => ({ keywordId: a!.keyword.id, leaseToken: a!.leaseToken, page, totalPages: 2, jobsFound: 4 }));
    const first = await reports(inputs);
    expect(first.data.reportPagesProgress.at(-1).keyword).toMatchObject({ status: "COMPLETED", jobsFound: 8, pagesCrawled: 2 });
    const row = await keyword(a!.keyword.id);
    const n = await events(a!.keyword.id);
    const again = await reports(inputs);
    expect(again.data.reportPagesProgress.map((i: any) => i.error)).toEqual([null, null]);
    expect(again.data.reportPagesProgress.at(-1).keyword).toMatchObject({ status: "COMPLETED", jobsFound: 8, pagesCrawled: 2 });
    expect(await keyword(a!.keyword.id)).toEqual(row);
    expect(await events(a!.keyword.id)).toBe(n);
  });

  it("bad input refuses the whole batch with BAD_USER_INPUT, nothing changed", async () => {
    await s.importKeywords("qcwy", ["bad1"], ["batch"]);
    const [a] = await claim("qcwy", 1, "bad-input");
    const before = await keyword(a!.keyword.id);
    const good = { keywordId: a!.keyword.id, leaseToken: a!.leaseToken, page: 1, jobsFound: 3 };
    expect(await s.code(REPORTS, { i: [good, { ...good, keywordId: "abc" }] }, s.tokens.spider)).toBe("BAD_USER_INPUT");
    expect(await s.code(REPORTS, { i: [] }, s.tokens.spider)).toBe("BAD_USER_INPUT");
    expect(await s.code(REPORTS, { i: Array.from({ length: 101 }, () => good) }, s.tokens.spider)).toBe("BAD_USER_INPUT");
    const c = { keywordId: a!.keyword.id, leaseToken: a!.leaseToken, status: "COMPLETED" };
    expect(await s.code(COMPLETES, { i: [c, { ...c, status: "PARTIAL" }] }, s.tokens.spider)).toBe("BAD_USER_INPUT");
    expect(await keyword(a!.keyword.id)).toEqual(before);
    // A page beyond maxPages is the state machine's to refuse: that item only.
    const r = await reports([good, { ...good, page: 10_000 }]);
    expect(r.data.reportPagesProgress.map((i: any) => i.error?.code ?? null)).toEqual([null, "BAD_USER_INPUT"]);
  });

  it("needs the spider scope", async () => {
    expect(await s.code(REPORTS, { i: [{ keywordId: "1", leaseToken: "x", page: 1, jobsFound: 1 }] }, s.tokens.viewer)).toBe("FORBIDDEN");
    expect(await s.code(COMPLETES, { i: [{ keywordId: "1", leaseToken: "x", status: "COMPLETED" }] }, s.tokens.viewer)).toBe("FORBIDDEN");
  });

  it("concurrent batches over the same keywords in opposite orders all commit, each page counted once", async () => {
    await s.importKeywords("zhilian", Array.from({ length: 20 }, (_, i) => `race${i}`), ["batch"]);
    const leases = await claim("zhilian", 20, "racer");
    const batch = (pages: number[], reverse: boolean) => {
      const items = leases.flatMap((l) => pages.map((page) => ({ keywordId: l.keyword.id, leaseToken: l.leaseToken, page, totalPages: 50, jobsFound: page })));
      return reports(reverse ? items.reverse() : items);
    };
    const results = await Promise.all([batch([1, 2], false), batch([1, 2], true), batch([3], false), batch([3], true)]);
    for (const r of results) {
      expect(r.errors).toBeUndefined();
      expect(r.data.reportPagesProgress.every((i: any) => i.error === null)).toBe(true);
    }
    for (const l of leases) expect(await keyword(l.keyword.id)).toMatchObject({ jobsFound: 6, pagesCrawled: 3, lastCompletedPage: 3 });
  });

  it("completes and claims the next in one request: the completion commits first; a refused one claims nothing", async () => {
    await s.importKeywords("boss", ["p1", "p2", "p3", "p4"], ["pipe"]);
    const [first] = await claim("boss", 1, "piper");
    const r = await s.ok(CompleteAndClaimDocument, {
      input: { keywordId: first!.keyword.id, leaseToken: first!.leaseToken, status: "COMPLETED" },
      source: "boss", crawlerId: "piper", limit: 1,
    }, s.tokens.spider);
    expect(r.reportCrawlComplete).toMatchObject({ id: first!.keyword.id, status: "COMPLETED" });
    expect(r.claimKeywords).toHaveLength(1);
    const next = r.claimKeywords[0]!;
    expect(next.keyword.id).not.toBe(first!.keyword.id);
    expect(next.keyword.status).toBe("CRAWLING");

    // A completion the server refuses stops the request: no claim, nothing changed.
    const before = await s.ok(`{ stats(source: "boss") { byStatus { idle crawling completed } } }`);
    const refused = await s.request(CompleteAndClaimDocument, {
      input: { keywordId: next.keyword.id, leaseToken: "not-the-lease", status: "COMPLETED" },
      source: "boss", crawlerId: "piper", limit: 1,
    }, { token: s.tokens.spider });
    expect(refused.errors?.map((e) => e.extensions?.code)).toEqual(["LEASE_LOST"]);
    expect(refused.data).toBeNull();
    expect(await s.ok(`{ stats(source: "boss") { byStatus { idle crawling completed } } }`)).toEqual(before);

    // The batch form: each item answered on its own, then the claim.
    const many = await s.ok(CompleteManyAndClaimDocument, {
      inputs: [
        { keywordId: next.keyword.id, leaseToken: next.leaseToken, status: "COMPLETED" },
        { keywordId: first!.keyword.id, leaseToken: "stale", status: "COMPLETED" }, // completed already, by another lease
      ],
      source: "boss", crawlerId: "piper", limit: 2,
    }, s.tokens.spider);
    expect(many.reportCrawlsComplete.map((i) => i.keyword?.status ?? i.error?.code)).toEqual(["COMPLETED", "INVALID_TRANSITION"]);
    expect(many.claimKeywords.map((c) => c.keyword.id).sort()).toHaveLength(2);
    for (const c of many.claimKeywords) expect([first!.keyword.id, next.keyword.id]).not.toContain(c.keyword.id);
  });
});
