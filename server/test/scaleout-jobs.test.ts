// Scheduled jobs with several instances on one PostgreSQL database. Two server processes sweep
// every second: each stale keyword gets exactly one CRAWLING → PARTIAL event, and each tick is run
// by one instance. And if two runs happen anyway (here: two stores sweeping at once, in-process),
// the compare-and-set writes still give one transition per keyword, for both jobs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/sqlite/client.ts";
import { CrawlCalendar, ManualClock } from "../src/crawl/crawl-day.ts";
import { CrawlStore } from "../src/crawl/store.ts";
import { type Database, openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { seedSources } from "../src/db/seed.ts";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { createTestDatabase, servicesAvailable, type TestDatabase } from "./databases.ts";
import { cities } from "./harness.ts";
import { type Cluster, ok, startCluster } from "./instances.ts";

const STALE = 300;
const CLAIM = `mutation { claimKeywords(source: "qcwy", crawlerId: "gone", limit: 100) { keyword { id } } }`;

type Event = { keywordId: number; from: string; to: string; reason: string };
/** Events of `reason` per keyword. */
async function eventsPerKeyword(db: Database, reason: string) {
  const rows = await db.query<Event>(Prisma.sql`SELECT "keywordId", "from", "to", "reason" FROM "CrawlEvent" WHERE "reason" = ${reason}`);
  const per = new Map<number, Event[]>();
  for (const e of rows) per.set(e.keywordId, [...(per.get(e.keywordId) ?? []), e]);
  return per;
}

const available = await servicesAvailable("scheduled jobs across instances", ["postgres"]);

describe.skipIf(!available)("a 1-second stale sweep on two instances", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, { STALE_SWEEP_CRON: "* * * * * *", LOG_LEVEL: "debug" }, (db) =>
      importKeywords(db, "qcwy", crossProduct(cities(STALE), ["stale"])).then(() => {}),
    );
  }, 120_000);
  afterAll(() => cluster?.close());

  it("gives each stale keyword exactly one CRAWLING → PARTIAL event, each tick run once", async () => {
    const { servers, tokens, db } = cluster;
    for (let i = 0; i < STALE / 100; i++) await ok(servers[i % 2]!.url, tokens.spider, CLAIM);
    // Their spiders went silent two hours ago (staleAfterSeconds is 30 minutes).
    const since = new Date();
    await db.transaction((tx) =>
      tx.execute(Prisma.sql`UPDATE "Keyword" SET "heartbeatAt" = ${new Date(Date.now() - 2 * 3600_000)} WHERE "sourceId" = 'qcwy' AND "status" = 'CRAWLING'`),
    );
    const crawling = async () =>
      Number((await db.query<{ n: number }>(Prisma.sql`SELECT count(*)::int AS n FROM "Keyword" WHERE "sourceId" = 'qcwy' AND "status" = 'CRAWLING'`))[0]!.n);
    for (const end = Date.now() + 15_000; (await crawling()) > 0; ) {
      if (Date.now() > end) throw new Error(`still ${await crawling()} CRAWLING after 15 s of 1-second sweeps`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // What each instance logged about the sweep's ticks since the keywords went stale.
    const logs = () => servers.map((s) => s.output().split("\n").filter((l) => l.includes('"job":"stale-sweep"')).map((l) => JSON.parse(l)));
    const ticks = (lines: any[], msg: string) => lines.filter((l) => l.msg === msg && new Date(l.tick) >= since).map((l) => new Date(l.tick).getTime());
    /** Ticks that both instances fired for (each logs "tick won" or "tick taken …" once per tick it fires). */
    const sharedTicks = (lines: any[][]) => {
      const fired = lines.map((l) => new Set([...ticks(l, "tick won"), ...ticks(l, "tick taken by another instance")]));
      return [...fired[0]!].filter((t) => fired[1]!.has(t));
    };
    // Let both instances tick at least three more times together: nothing more may happen.
    for (const end = Date.now() + 20_000; sharedTicks(logs()).length < 3 + 2; await new Promise((r) => setTimeout(r, 200))) {
      if (Date.now() > end) throw new Error(`the two instances fired together for only ${sharedTicks(logs()).length} ticks in 20 s`);
    }

    const stale = await eventsPerKeyword(db, "stale");
    expect(stale.size).toBe(STALE);
    const notOnce = [...stale].filter(([, list]) => list.length !== 1 || list[0]!.from !== "CRAWLING" || list[0]!.to !== "PARTIAL");
    expect(notOnce).toEqual([]);

    // Both instances' logs add up to one sweep of each keyword, and of every tick both fired for,
    // one instance won it and the other found it taken.
    const lines = logs();
    const swept = lines.flat().filter((l) => l.sourceId === "qcwy").reduce((n, l) => n + (l.keywords as number), 0);
    expect(swept).toBe(STALE);
    for (const t of sharedTicks(lines)) {
      const count = (msg: string) => lines.map((l) => ticks(l, msg).filter((x) => x === t).length).sort();
      expect({ tick: new Date(t), won: count("tick won"), taken: count("tick taken by another instance") })
        .toEqual({ tick: new Date(t), won: [0, 1], taken: [0, 1] });
    }
    // The winners' rows.
    const rows = await db.query<{ n: number }>(
      Prisma.sql`SELECT count(*)::int AS n FROM "JobTick" WHERE "job" = 'stale-sweep' AND "tick" IN (${Prisma.join(sharedTicks(lines).map((t) => new Date(t)))})`,
    );
    expect(rows[0]!.n).toBe(sharedTicks(lines).length);
  }, 60_000);
});

describe.skipIf(!available)("two runs of a job at once (no tick lease) on PostgreSQL", () => {
  let tdb: TestDatabase;
  let dbs: Database[];
  beforeAll(async () => {
    tdb = await createTestDatabase("postgres");
    await migrate(tdb.url);
    dbs = [await openDatabase(tdb.url), await openDatabase(tdb.url)];
    await seedSources(dbs[0]!);
    await importKeywords(dbs[0]!, "qcwy", crossProduct(cities(STALE), ["twice"]));
  });
  afterAll(async () => {
    for (const d of dbs ?? []) await d.close();
    await tdb?.drop();
  });

  it("stale sweep and day rollover still change each keyword once", async () => {
    const clock = new ManualClock(new Date("2026-11-29T02:00:00Z"));
    // Two instances: separate connection pools, one clock.
    const [a, b] = dbs.map((d) => new CrawlStore(d, new CrawlCalendar(clock, "Asia/Shanghai"))) as [CrawlStore, CrawlStore];
    for (let i = 0; i < STALE / 100; i++) expect(await a.claim("qcwy", "gone", 100)).toHaveLength(100);
    clock.advance(2 * 3600_000);
    const [sa, sb] = await Promise.all([a.sweepStale(), b.sweepStale()]);
    expect((sa.get("qcwy") ?? 0) + (sb.get("qcwy") ?? 0)).toBe(STALE);
    const stale = await eventsPerKeyword(dbs[0]!, "stale");
    expect(stale.size).toBe(STALE);
    expect([...stale.values()].every((l) => l.length === 1)).toBe(true);

    clock.advance(24 * 3600_000); // the next crawl day
    const [ra, rb] = await Promise.all([a.rollover(), b.rollover()]);
    expect((ra.get("qcwy") ?? 0) + (rb.get("qcwy") ?? 0)).toBe(STALE);
    const rolled = await eventsPerKeyword(dbs[0]!, "rollover");
    expect(rolled.size).toBe(STALE);
    expect([...rolled.values()].every((l) => l.length === 1 && l[0]!.from === "PARTIAL" && l[0]!.to === "IDLE")).toBe(true);
    // The day's counters agree: yesterday's PARTIAL keywords are counted nowhere today.
    const counters = await dbs[0]!.query<{ n: number }>(
      Prisma.sql`SELECT coalesce(sum("keywords"), 0)::int AS n FROM "CrawlCounter" WHERE "sourceId" = 'qcwy' AND "crawlDate" = ${a["calendar"].today()} AND "status" <> 'IDLE'`,
    );
    expect(counters[0]!.n).toBe(0);
  });
});
