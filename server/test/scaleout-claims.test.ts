// Two server processes on one PostgreSQL database, 64 concurrent clients (half on each): 10,000
// claims over 2,000 keywords, each followed by a release (the keyword goes PARTIAL and is claimed
// again, usually by a spider on the other instance) or, for every 7th, a completion (so fresh
// keywords keep being drawn). Never two live leases on one keyword: the CrawlEvent log of every
// keyword is one unbroken chain of transitions, and the final state agrees with it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/sqlite/client.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { servicesAvailable } from "./databases.ts";
import { cities } from "./harness.ts";
import { type Cluster, ok, startCluster } from "./instances.ts";

const CLAIMS = 10_000;
const KEYWORDS = 2_000;
const CLIENTS = 64;

const CLAIM = `mutation($c: String!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: 1) { keyword { id } leaseToken } }`;
const RELEASE = `mutation($k: ID!, $l: String!) { releaseKeyword(keywordId: $k, leaseToken: $l) { status } }`;
const COMPLETE = `mutation($k: ID!, $l: String!) { reportCrawlComplete(input: { keywordId: $k, leaseToken: $l, status: COMPLETED }) { status } }`;

describe.skipIf(!(await servicesAvailable("two-instance claim race", ["postgres"])))("two instances on one PostgreSQL", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, {}, (db) => importKeywords(db, "qcwy", crossProduct(cities(KEYWORDS), ["race"])).then(() => {}));
  }, 120_000);
  afterAll(() => cluster?.close());

  it("10,000 claims by 64 clients never give two live leases on one keyword", async () => {
    const { servers, tokens, db } = cluster;
    // Each instance serves half of the clients and half of the claims.
    const next = [0, 0];
    const leases = new Set<string>();
    const perInstance = [0, 0];
    const client = async (n: number) => {
      const side = n % 2;
      const url = servers[side]!.url;
      for (;;) {
        const i = 2 * next[side]!++ + side;
        if (i >= CLAIMS) return;
        const claims = (await ok(url, tokens.spider, CLAIM, { c: `client-${n}` })).claimKeywords;
        expect(claims).toHaveLength(1); // 2,000 keywords, at most 1,429 completed: never empty
        const { keyword, leaseToken } = claims[0];
        leases.add(leaseToken);
        perInstance[side]!++;
        const end = i % 7 === 0 ? COMPLETE : RELEASE;
        const r = await ok(url, tokens.spider, end, { k: keyword.id, l: leaseToken });
        expect(Object.values(r)[0]).toMatchObject({ status: i % 7 === 0 ? "COMPLETED" : "PARTIAL" });
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
    expect(leases.size).toBe(CLAIMS);
    expect(perInstance[0]).toBe(CLAIMS / 2);
    expect(perInstance[1]).toBe(CLAIMS / 2);

    // The event log: per keyword, in commit order (a keyword's writers queue on its row lock, so
    // ids follow commits), every transition starts where the previous one ended. A second live
    // lease would show as CRAWLING → CRAWLING, or a claim whose `from` is CRAWLING.
    const events = await db.query<{ keywordId: number; from: string; to: string; reason: string }>(
      Prisma.sql`SELECT "keywordId", "from", "to", "reason" FROM "CrawlEvent" WHERE "sourceId" = 'qcwy' ORDER BY "keywordId", "id"`,
    );
    const byKeyword = new Map<number, typeof events>();
    for (const e of events) byKeyword.set(e.keywordId, [...(byKeyword.get(e.keywordId) ?? []), e]);
    const broken: string[] = [];
    let claimEvents = 0;
    for (const [id, list] of byKeyword) {
      let state = "IDLE";
      for (const e of list) {
        if (e.from !== state || (e.to === "CRAWLING" && e.from === "CRAWLING")) broken.push(`${id}: ${state} then ${e.from}→${e.to}`);
        if (e.to === "CRAWLING") claimEvents++;
        state = e.to;
      }
      if (state === "CRAWLING") broken.push(`${id}: still CRAWLING`);
    }
    expect(broken).toEqual([]);
    expect(claimEvents).toBe(CLAIMS);
    // Fresh keywords kept being drawn, and released ones were claimed again.
    expect(byKeyword.size).toBeGreaterThanOrEqual(Math.ceil(CLAIMS / 7));
    expect([...byKeyword.values()].filter((l) => l.filter((e) => e.to === "CRAWLING").length > 1).length).toBeGreaterThan(100);

    // The final state agrees with the log, in one query: nothing is held, and every keyword's
    // status is the `to` of its last event.
    const [summary] = await db.query<{ crawling: bigint | number; disagree: bigint | number; completed: bigint | number }>(Prisma.sql`
      SELECT
        (SELECT count(*) FROM "Keyword" WHERE "sourceId" = 'qcwy' AND "status" = 'CRAWLING') AS crawling,
        (SELECT count(*) FROM "Keyword" WHERE "sourceId" = 'qcwy' AND "status" = 'COMPLETED') AS completed,
        (SELECT count(*) FROM "Keyword" k JOIN LATERAL (
            SELECT e."to" FROM "CrawlEvent" e WHERE e."keywordId" = k."id" ORDER BY e."id" DESC LIMIT 1) last ON true
          WHERE k."sourceId" = 'qcwy' AND last."to" <> k."status") AS disagree`);
    expect({ crawling: Number(summary!.crawling), completed: Number(summary!.completed), disagree: Number(summary!.disagree) })
      .toEqual({ crawling: 0, completed: Math.ceil(CLAIMS / 7), disagree: 0 });
  }, 300_000);
});
