// Live updates over graphql-ws on the same port as HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { cities, collect, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const DISTRIBUTION = `subscription($s: ID!) { crawlStatusDistribution(source: $s) {
  total used jobsFound pagesCrawled byStatus { idle crawling completed failed partial } } }`;

describe.each(await testProviders())("subscriptions on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider, { config: { DISTRIBUTION_THROTTLE_MS: 250 } });
  });
  afterAll(() => s?.close());

  it("crawlStatusDistribution emits at once, then again after a report", async () => {
    await s.importKeywords("boss", ["北京", "上海"], ["Java"]);
    const sub = collect(s.ws(), DISTRIBUTION, { s: "boss" });
    await sub.until(() => sub.messages.length >= 1);
    expect(sub.messages[0].crawlStatusDistribution).toMatchObject({ total: 2, used: 0, byStatus: { idle: 2, crawling: 0 } });

    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "ws", limit: 1 }, s.tokens.spider)).claimKeywords;
    await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.byStatus.crawling === 1);
    await s.ok(ReportPageProgressDocument, { input: { keywordId: c!.keyword.id, leaseToken: c!.leaseToken, page: 1, jobsFound: 12 } }, s.tokens.spider);
    await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.jobsFound === 12);
    expect(sub.messages.at(-1).crawlStatusDistribution).toMatchObject({ used: 1, pagesCrawled: 1, byStatus: { idle: 1, crawling: 1 } });
    sub.stop();
  });

  it("a burst of reports is coalesced into a few messages that end on the final counts", async () => {
    await s.importKeywords("qcwy", cities(40), ["burst"]);
    const sub = collect(s.ws(), DISTRIBUTION, { s: "qcwy" });
    await sub.until(() => sub.messages.length >= 1);
    const claims = (await s.ok(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "burst", limit: 40 }, s.tokens.spider)).claimKeywords;
    // 40 keywords × 3 pages = 120 reports, 40 at a time.
    for (const page of [1, 2, 3]) {
      await Promise.all(
        claims.map((c) =>
          s.ok(ReportPageProgressDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, jobsFound: 1 } }, s.tokens.spider),
        ),
      );
    }
    await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.pagesCrawled === 120);
    // 1 claim + 120 reports = 121 changes; far fewer messages.
    expect(sub.messages.length).toBeLessThan(30);
    const stats = (await s.ok(`{ stats(source: "qcwy") { jobsFound pagesCrawled byStatus { crawling } } }`)).stats;
    expect(sub.messages.at(-1).crawlStatusDistribution).toMatchObject(stats);
    sub.stop();
  });

  it("keywordChanged delivers each changed keyword of the source", async () => {
    await s.importKeywords("zhilian", ["广州"], ["会计"]);
    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "zhilian", crawlerId: "kc", limit: 1 }, s.tokens.spider)).claimKeywords;
    const sub = collect(s.ws(), `subscription { keywordChanged(source: "zhilian") { city job status crawlerId } }`, {});
    // graphql-ws has no "subscribed" acknowledgement: keep the keyword changing until it is seen.
    const beat = setInterval(() => {
      void s.request(`mutation($id: ID!, $l: String!) { heartbeat(keywordId: $id, leaseToken: $l) { id } }`,
        { id: c!.keyword.id, l: c!.leaseToken }, { token: s.tokens.spider });
    }, 100);
    try {
      await sub.until(() => sub.messages.length >= 1);
    } finally {
      clearInterval(beat);
    }
    expect(sub.messages[0].keywordChanged).toEqual({ city: "广州", job: "会计", status: "CRAWLING", crawlerId: "kc" });
    sub.stop();
  });

  it("an unknown source is NOT_FOUND", async () => {
    const sub = collect(s.ws(), DISTRIBUTION, { s: "nope" });
    await sub.until(() => sub.errors.length > 0);
    expect((sub.errors[0] as any).extensions?.code).toBe("NOT_FOUND");
  });

  it("a document that does not parse is an error on the operation, and the socket stays open", async () => {
    const client = s.ws();
    const bad = collect(client, `subscription { crawlStatusDistribution(source: "boss") { total `, {});
    const good = collect(client, DISTRIBUTION, { s: "boss" });
    await bad.until(() => bad.errors.length > 0);
    expect((bad.errors[0] as any)[0]?.extensions?.code ?? (bad.errors[0] as any).extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    await good.until(() => good.messages.length > 0);
    good.stop();
  });

  it("a bad token cannot open a socket", async () => {
    const client = s.ws("ccp_not-a-real-token");
    const sub = collect(client, DISTRIBUTION, { s: "boss" });
    await sub.until(() => sub.errors.length > 0);
    expect((sub.errors[0] as CloseEvent).code).toBe(4403);
  });
});

describe("subscriptions with PUBLIC_READS=false", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("sqlite", { config: { PUBLIC_READS: false } });
  });
  afterAll(() => s?.close());

  it("need a token in connectionParams", async () => {
    const anon = collect(s.ws(null), DISTRIBUTION, { s: "boss" });
    await anon.until(() => anon.errors.length > 0);
    expect((anon.errors[0] as CloseEvent).code).toBe(4403);
    const viewer = collect(s.ws(s.tokens.viewer), DISTRIBUTION, { s: "boss" });
    await viewer.until(() => viewer.messages.length > 0);
    viewer.stop();
  });
});
