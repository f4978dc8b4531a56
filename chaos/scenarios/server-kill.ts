// The server SIGKILLed under load: 16 clients report pages; at a random moment the server process
// is killed; after a restart on the same database every acknowledged report is there, each
// keyword's counters agree with its stored pages, and the leases still work.
import { createToken, Role } from "../../server/src/auth/tokens.ts";
import { crossProduct, importKeywords } from "../../server/src/keywords/import.ts";
import { preparedTestDatabase } from "../../server/test/databases.ts";
import { cities, middayTimeZone } from "../../server/test/harness.ts";
import { spawnServer, type ServerProcess } from "../../server/test/process.ts";
import { Checks, gql, type Scenario, sleep } from "../lib.ts";

const CLAIM = `mutation($n: Int) { claimKeywords(source: "qcwy", crawlerId: "chaos", limit: $n) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id lastCompletedPage } }`;

async function trial(provider: "sqlite" | "postgres", c: Checks) {
  const failedBefore = c.failed;
  const { tdb, db } = await preparedTestDatabase(provider);
  let server: ServerProcess | undefined;
  await importKeywords(db, "qcwy", crossProduct(cities(100), ["kill"]));
  try {
    const token = (await createToken(db, Role.SPIDER, "chaos")).token;
    const zone = middayTimeZone();
    server = await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: zone });
    const claims = (await gql(server.url, CLAIM, { n: 100 }, token)).json.data.claimKeywords as { keyword: { id: string }; leaseToken: string }[];
    const acked: { id: string; page: number }[] = [];
    let next = 0;
    const url = server.url;
    const worker = async () => {
      for (;;) {
        const i = next++;
        const cl = claims[i % claims.length]!;
        const page = Math.floor(i / claims.length) + 1;
        if (page > 50) return;
        try {
          const r = await gql(url, REPORT, { i: { keywordId: cl.keyword.id, leaseToken: cl.leaseToken, page, jobsFound: 10 } }, token);
          if (!r.json?.data?.reportPageProgress) return;
          acked.push({ id: cl.keyword.id, page });
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    const killAfter = 100 + Math.floor(Math.random() * 1500);
    while (acked.length < killAfter && next < 5000) await sleep(2);
    await server.kill("SIGKILL");
    await Promise.all(workers);

    server = await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: zone });
    const reports = await db.reader.pageReport.findMany({ where: { sourceId: "qcwy" } });
    const stored = new Set(reports.map((r) => `${r.keywordId}:${r.page}`));
    const missing = acked.filter((a) => !stored.has(`${a.id}:${a.page}`));
    c.equal(missing.length, 0, `acknowledged reports missing after the restart`);
    const keywords = await db.reader.keyword.findMany({ where: { sourceId: "qcwy" } });
    let consistent = true;
    for (const k of keywords) {
      const mine = reports.filter((r) => r.keywordId === k.id);
      consistent &&= k.jobsFound === mine.reduce((n, r) => n + r.jobsFound, 0) && k.pagesCrawled === mine.length && k.lastCompletedPage === Math.max(0, ...mine.map((r) => r.page));
    }
    c.ok(consistent, "every keyword's counters agree with its stored pages");
    const stats = (await gql(server.url, `{ stats(source: "qcwy") { byStatus { crawling } jobsFound pagesCrawled } }`, {}, token)).json.data.stats;
    c.equal(stats, { byStatus: { crawling: 100 }, jobsFound: reports.length * 10, pagesCrawled: reports.length }, "stats after the restart");
    // Spiders carry on with the leases they hold.
    const first = claims[0]!;
    const kw = keywords.find((k) => String(k.id) === first.keyword.id)!;
    const r = await gql(server.url, REPORT, { i: { keywordId: first.keyword.id, leaseToken: first.leaseToken, page: kw.lastCompletedPage + 1, jobsFound: 1 } }, token);
    c.ok(r.json?.data?.reportPageProgress?.lastCompletedPage === kw.lastCompletedPage + 1, `a held lease works after the restart: ${r.text.slice(0, 200)}`);
    return { acked: acked.length, stored: reports.length, missing: missing.length, ok: c.failed === failedBefore };
  } finally {
    await server?.kill();
    await db.close();
    await tdb.drop();
  }
}

export const serverKill: Scenario = {
  name: "server-kill",
  async run(ctx) {
    const c = new Checks();
    const total = ctx.trials ? Math.min(ctx.trials, 10) : ctx.quick ? 1 : 5;
    const runs = [];
    const bar = ctx.progress(total);
    for (let i = 0; i < total; i++) {
      try {
        runs.push(await trial(ctx.db, c));
      } catch (e) {
        c.ok(false, `trial ${i + 1}: ${(e as Error).message.split("\n")[0]}`);
      }
      bar.tick();
    }
    bar.done();
    const acked = runs.reduce((n, r) => n + r.acked, 0);
    const missing = runs.reduce((n, r) => n + r.missing, 0);
    return {
      tried: `${total} SIGKILLs of the server process under 16 concurrent reporters (after 100–1600 acknowledged reports), restart on the same ${ctx.db} database`,
      survived: `${acked - missing}/${acked} acknowledged reports present after restart; ${runs.filter((r) => r.ok).length}/${total} restarts consistent (counters = stored pages, stats agree, held leases work)`,
      checks: c.count,
      failures: c.failures,
      details: { trials: total, acknowledged: acked, missing, runs },
    };
  },
};
