// Two server processes on one PostgreSQL database sharing a Redis bus (REDIS_URL, a channel prefix
// of this test's own): a graphql-ws subscriber on instance A hears what spiders do through
// instance B — the distribution within 1 s of a report, and every changed keyword — and a burst
// through B still reaches A coalesced (one computation per throttle window).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { servicesAvailable, testRedis } from "./databases.ts";
import { cities } from "./harness.ts";
import { type Cluster, ok, startCluster } from "./instances.ts";
import { collect, DISTRIBUTION } from "./subscribe.ts";

const CLAIM = `mutation($s: ID!, $n: Int) { claimKeywords(source: $s, crawlerId: "via-b", limit: $n) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;
const HEARTBEAT = `mutation($k: ID!, $l: String!) { heartbeat(keywordId: $k, leaseToken: $l) { id } }`;
/** The bound the issue sets: A sees a change made through B within this. */
const WITHIN_MS = 1000;
const THROTTLE_MS = 200;

describe.skipIf(!(await servicesAvailable("two instances sharing Redis", ["postgres", "redis"])))("two instances sharing a Redis bus", () => {
  let cluster: Cluster;
  let client: Client;
  let a: string;
  let b: string;
  beforeAll(async () => {
    cluster = await startCluster(2, { ...testRedis(), DISTRIBUTION_THROTTLE_MS: String(THROTTLE_MS) }, async (db) => {
      await importKeywords(db, "boss", crossProduct(["北京", "上海"], ["Java"]));
      await importKeywords(db, "qcwy", crossProduct(cities(40), ["burst"]));
      await importKeywords(db, "zhilian", crossProduct(["广州"], ["会计"]));
    });
    [a, b] = cluster.servers.map((s) => s.url) as [string, string];
    client = createClient({ url: a.replace(/^http/, "ws"), webSocketImpl: WebSocket, retryAttempts: 0, lazy: true,
      connectionParams: { Authorization: `Bearer ${cluster.tokens.viewer}` } });
  }, 120_000);
  afterAll(async () => {
    await client?.dispose();
    await cluster?.close();
  });

  it(`a subscriber on A receives the distribution change of a report through B within ${WITHIN_MS} ms`, async () => {
    const { spider } = cluster.tokens;
    const sub = collect(client, DISTRIBUTION, { s: "boss" });
    await sub.until(() => sub.messages.length >= 1);
    expect(sub.messages[0].crawlStatusDistribution).toMatchObject({ total: 2, used: 0, byStatus: { idle: 2 } });

    const [c] = (await ok(b, spider, CLAIM, { s: "boss", n: 1 })).claimKeywords;
    await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.byStatus.crawling === 1);
    // Three pages, each timed from the moment the report is sent to B until A's subscriber has it.
    const took: number[] = [];
    for (const page of [1, 2, 3]) {
      const t0 = performance.now();
      await ok(b, spider, REPORT, { i: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, jobsFound: 10 } });
      await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.jobsFound === 10 * page, 5000);
      took.push(performance.now() - t0);
    }
    console.info(`[measure] report through B → distribution on A: ${took.map((t) => `${t.toFixed(0)} ms`).join(", ")}`);
    expect(Math.max(...took)).toBeLessThanOrEqual(WITHIN_MS);
    expect(sub.messages.at(-1).crawlStatusDistribution).toMatchObject({ used: 1, pagesCrawled: 3, byStatus: { idle: 1, crawling: 0, completed: 1 } }); // boss: 3 pages at most
    sub.stop();
  });

  it("keywordChanged on A delivers a keyword changed through B", async () => {
    const { spider } = cluster.tokens;
    const [c] = (await ok(b, spider, CLAIM, { s: "zhilian", n: 1 })).claimKeywords;
    const sub = collect(client, `subscription { keywordChanged(source: "zhilian") { city job status crawlerId } }`, {});
    // graphql-ws has no "subscribed" acknowledgement: keep the keyword changing until it is seen.
    const beat = setInterval(() => void ok(b, spider, HEARTBEAT, { k: c.keyword.id, l: c.leaseToken }).catch(() => {}), 100);
    try {
      await sub.until(() => sub.messages.length >= 1);
    } finally {
      clearInterval(beat);
    }
    expect(sub.messages[0].keywordChanged).toEqual({ city: "广州", job: "会计", status: "CRAWLING", crawlerId: "via-b" });
    sub.stop();
  });

  it("a burst of reports through B reaches A coalesced, ending on the final counts", async () => {
    const { spider, admin } = cluster.tokens;
    const sub = collect(client, DISTRIBUTION, { s: "qcwy" });
    await sub.until(() => sub.messages.length >= 1);
    const before = sub.messages.length;
    const t0 = performance.now();
    const claims = (await ok(b, spider, CLAIM, { s: "qcwy", n: 40 })).claimKeywords;
    for (const page of [1, 2, 3]) {
      await Promise.all(
        claims.map((c: any) => ok(b, spider, REPORT, { i: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, jobsFound: 1 } })),
      );
    }
    await sub.until(() => sub.messages.at(-1)?.crawlStatusDistribution.pagesCrawled === 120);
    const elapsed = performance.now() - t0;
    // 121 changes, all heard by A through Redis; A computes (and sends) at most once per window.
    const sent = sub.messages.length - before;
    expect(sent).toBeLessThanOrEqual(Math.ceil(elapsed / THROTTLE_MS) + 1);
    expect(sent).toBeLessThan(121);
    const stats = (await ok(a, admin, `{ stats(source: "qcwy") { jobsFound pagesCrawled byStatus { crawling } } }`)).stats;
    expect(sub.messages.at(-1).crawlStatusDistribution).toMatchObject(stats);
    sub.stop();
  });
});
