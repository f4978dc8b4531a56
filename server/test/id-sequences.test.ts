// Ids that grow without bound stay usable: a re-import or a refresh hands out no ids, and the
// transition log keeps working past 2^31 events (PostgreSQL's 32-bit serial would stop every write).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/sqlite/client.ts";
import { ClaimKeywordsDocument, ReportCrawlCompleteDocument } from "../../spiders/src/gql/graphql.ts";
import { cities, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

describe.each(await testProviders())("id sequences on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  /** The highest id a table's sequence (PostgreSQL) or AUTOINCREMENT record (SQLite) has handed out. */
  const handedOut = async (table: "Keyword" | "CrawlEvent") => {
    const [row] = await s.app.services.database.query<{ n: number | string }>(
      provider === "postgres"
        ? Prisma.sql`SELECT last_value AS n FROM ${Prisma.raw(`"${table}_id_seq"`)}`
        : Prisma.sql`SELECT seq AS n FROM sqlite_sequence WHERE name = ${table}`,
    );
    return Number(row?.n ?? 0);
  };

  it("re-importing a keyword list hands out no ids; concurrent re-imports create each keyword once", async () => {
    const list = cities(600); // × 2 jobs: more than one chunk of the import
    expect(await s.importKeywords("qcwy", list, ["Java", "Go"])).toEqual({ created: 1200, existing: 0 });
    const after = await handedOut("Keyword");
    for (let i = 0; i < 3; i++) expect(await s.importKeywords("qcwy", list, ["Java", "Go"])).toEqual({ created: 0, existing: 1200 });
    expect(await handedOut("Keyword")).toBe(after);
    // Two new keywords among the known ones: two ids.
    expect(await s.importKeywords("qcwy", [...list, "新城"], ["Java", "Go"])).toEqual({ created: 2, existing: 1200 });
    expect(await handedOut("Keyword")).toBe(after + 2);
    const racing = await Promise.all([0, 1, 2].map(() => s.importKeywords("qcwy", ["竞速"], ["Java", "Go"])));
    expect(racing.reduce((n, r) => n + r.created, 0)).toBe(2);
    expect(await s.app.services.database.reader.keyword.count({ where: { sourceId: "qcwy" } })).toBe(1204);
  });

  it("the transition log keeps working past 2^31 events", async () => {
    const db = s.app.services.database;
    // As if 2^31 transitions had been logged already.
    await db.transaction(async (tx) => {
      if (provider === "postgres") await tx.query(Prisma.sql`SELECT setval(pg_get_serial_sequence('"CrawlEvent"', 'id'), 2147483645)`);
      else {
        await tx.execute(Prisma.sql`DELETE FROM sqlite_sequence WHERE "name" = 'CrawlEvent'`);
        await tx.execute(Prisma.sql`INSERT INTO sqlite_sequence ("name", "seq") VALUES ('CrawlEvent', 2147483645)`);
      }
    });
    await s.importKeywords("boss", ["上海"], ["Java", "Go", "Rust"]);
    for (let round = 0; round < 2; round++) {
      const claims = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "c", limit: 3 }, s.tokens.spider)).claimKeywords;
      expect(claims).toHaveLength(3);
      for (const c of claims) {
        const input = { keywordId: c.keyword.id, leaseToken: c.leaseToken, status: "FAILED", errorMessage: "blocked" } as const;
        await s.ok(ReportCrawlCompleteDocument, { input }, s.tokens.spider);
      }
    }
    expect(await handedOut("CrawlEvent")).toBeGreaterThan(2 ** 31);
    const id = (await db.reader.keyword.findFirstOrThrow({ where: { sourceId: "boss", job: "Go" } })).id;
    const history = (await s.ok(`query($id: ID!) { keyword(id: $id) { events { id from to } } }`, { id: String(id) })).keyword.events;
    expect(history.map((e: { from: string; to: string }) => `${e.from}→${e.to}`)).toEqual(["CRAWLING→FAILED", "FAILED→CRAWLING", "CRAWLING→FAILED", "IDLE→CRAWLING"]);
    // Newest first, as strings of digits, the newest past 2^31.
    const ids = history.map((e: { id: string }) => e.id);
    expect(ids.every((id: string) => /^\d+$/.test(id) && Number(id) > 2147483645)).toBe(true);
    expect(Number(ids[0])).toBeGreaterThan(2 ** 31);
    expect([...ids].sort((a, b) => Number(b) - Number(a))).toEqual(ids);
  });
});
