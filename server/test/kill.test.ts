// No acknowledged report is lost when the server is killed (SIGKILL) under load, and the state
// after a restart is consistent: jobsFound is the sum of the stored pages, every lease is whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken, Role } from "../src/auth/tokens.ts";
import type { Database } from "../src/db/client.ts";
import { importKeywords, crossProduct } from "../src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "./databases.ts";
import { spawnServer, type ServerProcess } from "./process.ts";
import { cities, middayTimeZone } from "./harness.ts";

async function gql(url: string, token: string, query: string, variables: Record<string, unknown>) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as { data?: any; errors?: any[] };
}

const CLAIM = `mutation($n: Int) { claimKeywords(source: "qcwy", crawlerId: "killer", limit: $n) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id lastCompletedPage } }`;

describe.each(await testProviders())("server killed under load on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  let token: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    await importKeywords(db, "qcwy", crossProduct(cities(100), ["kill"]));
    token = (await createToken(db, Role.SPIDER, "killer")).token;
  });
  afterAll(async () => {
    await server?.kill();
    await db?.close();
    await tdb?.drop();
  });

  it("keeps every acknowledged report across a SIGKILL and restart", async () => {
    const zone = middayTimeZone(); // the real clock: keep midnight out of the way
    server = await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: zone });
    const claims: { keyword: { id: string }; leaseToken: string }[] = (await gql(server.url, token, CLAIM, { n: 100 })).data.claimKeywords;
    expect(claims).toHaveLength(100);

    // 16 workers report pages 1..50 of their keywords, 10 jobs per page, until the server dies.
    const acked: { id: string; page: number }[] = [];
    let next = 0;
    const url = server.url;
    const worker = async () => {
      for (;;) {
        const i = next++;
        const c = claims[i % claims.length]!;
        const page = Math.floor(i / claims.length) + 1;
        if (page > 50) return;
        try {
          const r = await gql(url, token, REPORT, { i: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page, jobsFound: 10 } });
          if (r.data?.reportPageProgress) acked.push({ id: c.keyword.id, page });
          else throw new Error(JSON.stringify(r.errors));
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    while (acked.length < 400) await new Promise((r) => setTimeout(r, 5));
    await server.kill("SIGKILL");
    await Promise.all(workers);
    expect(acked.length).toBeGreaterThanOrEqual(400);

    // Restart on the same database: everything acknowledged is there.
    server = await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: zone });
    const reports = await db.reader.pageReport.findMany({ where: { sourceId: "qcwy" } });
    const stored = new Set(reports.map((r) => `${r.keywordId}:${r.page}`));
    const missing = acked.filter((a) => !stored.has(`${a.id}:${a.page}`));
    expect(missing).toEqual([]);
    // Consistency: every keyword's counters agree with its stored pages.
    const keywords = await db.reader.keyword.findMany({ where: { sourceId: "qcwy" } });
    for (const k of keywords) {
      const mine = reports.filter((r) => r.keywordId === k.id);
      expect(k.jobsFound).toBe(mine.reduce((n, r) => n + r.jobsFound, 0));
      expect(k.pagesCrawled).toBe(mine.length);
      expect(k.lastCompletedPage).toBe(Math.max(0, ...mine.map((r) => r.page)));
      expect(k.status).toBe("CRAWLING");
    }
    // The day's counters (what stats read) survived the kill in step with the rows.
    const stats = (await gql(server.url, token, `{ stats(source: "qcwy") { byStatus { crawling } jobsFound pagesCrawled } }`, {})).data.stats;
    expect(stats).toEqual({
      byStatus: { crawling: 100 },
      jobsFound: keywords.reduce((n, k) => n + k.jobsFound, 0),
      pagesCrawled: keywords.reduce((n, k) => n + k.pagesCrawled, 0),
    });
    // The restarted server serves the same leases: a spider carries on where it was.
    const c = claims[0]!;
    const kw = keywords.find((k) => String(k.id) === c.keyword.id)!;
    const r = await gql(server.url, token, REPORT, { i: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: kw.lastCompletedPage + 1, jobsFound: 1 } });
    expect(r.errors).toBeUndefined();
    expect(r.data.reportPageProgress.lastCompletedPage).toBe(kw.lastCompletedPage + 1);
  });
});
