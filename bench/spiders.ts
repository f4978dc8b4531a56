// npm run bench:spiders [-- --quick] [--db sqlite|postgres] [--keywords N] [--concurrency N] [--crash-rounds N]
//
// Pages/s crawled end to end: the real server, the job-board simulator and one spider process per
// site (as `npm run spider` runs them), every page fetched, its postings submitted and its progress
// reported. Next to it, measured in the same run: the site-side floor (the same pages fetched and
// parsed by one process, no server), so the ratio shows what the control plane costs per page.
// Then crash rounds: a spider SIGKILLed at a random page, the stale sweep, a second spider resumes;
// counts the pages fetched twice. Last, where one page's time goes (site fetch, the two writes, and
// a heartbeat as the server's per-request floor), and the server's ceiling at the fleet's
// concurrency (heartbeats/s; a page costs two mutations). Prints a table; never asserts a speed.
import { performance } from "node:perf_hooks";
import { Command, InvalidArgumentError } from "commander";
import { pino } from "pino";
import { Prisma } from "../generated/sqlite/client.ts";
import { buildApp } from "../server/src/app.ts";
import { createToken, Role } from "../server/src/auth/tokens.ts";
import { crossProduct, importKeywords } from "../server/src/keywords/import.ts";
import { createTestDatabase } from "../server/test/databases.ts";
import { middayTimeZone } from "../server/test/harness.ts";
import { pageCount, SITES, type SiteId } from "../spiders/sim/data.ts";
import { createSimServer } from "../spiders/sim/server.ts";
import { cityCode, SITE_ADAPTERS } from "../spiders/src/sites/index.ts";
import { spawnSpider } from "../spiders/test/spider-process.ts";
import { qcwy } from "../spiders/src/sites/qcwy.ts";
import { ServerClient } from "../spiders/src/runtime/server-client.ts";
import {
  ClaimKeywordsDocument,
  HeartbeatDocument,
  ReportPageProgressDocument,
  SubmitJobPostingsDocument,
} from "../spiders/src/gql/graphql.ts";

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("must be a non-negative integer");
  return n;
};
const opts = new Command("bench:spiders")
  .option("--quick", "a small, fast run")
  .option("--db <provider>", "sqlite or postgres", "sqlite")
  .option("--keywords <n>", "keywords per site", int)
  .option("--concurrency <n>", "keywords in flight per spider", int, 4)
  .option("--crash-rounds <n>", "SIGKILL/resume rounds", int)
  .parse()
  .opts<{ quick?: boolean; db: string; keywords?: number; concurrency: number; crashRounds?: number }>();
if (opts.db !== "sqlite" && opts.db !== "postgres") throw new InvalidArgumentError("--db must be sqlite or postgres");
const PER_SITE = opts.keywords ?? (opts.quick ? 12 : 30);
const ROUNDS = opts.crashRounds ?? (opts.quick ? 2 : 8);
const CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都"];
const jobs = (n: number) => Array.from({ length: Math.ceil(n / CITIES.length) }, (_, i) => `岗位${i}`);

const db = await createTestDatabase(opts.db as "sqlite" | "postgres");
const app = await buildApp({
  config: { DATABASE_URL: db.url, LOG_LEVEL: "silent", CRAWL_TZ: middayTimeZone() },
  logger: pino({ level: "silent" }),
  scheduler: false,
});
await app.start(0, "127.0.0.1");
const database = app.services.database;
const { token } = await createToken(database, Role.SPIDER, "bench");
const sim = createSimServer({ seed: "bench" });
await sim.start(0);
const fleet = { apiUrl: app.url(), token, simUrl: sim.url() };
const env = { SITE_RATE_PER_SEC: "10000", SPIDER_POLL_MS: "100", RETRY_MIN_MS: "20", RETRY_MAX_MS: "200" };

try {
  // 1. The fleet: one spider per site crawls every keyword.
  for (const site of SITES) await importKeywords(database, site, crossProduct(CITIES, jobs(PER_SITE)).slice(0, PER_SITE));
  const t0 = performance.now();
  const spiders = SITES.map((site) => spawnSpider(site, fleet, ["--once", "--concurrency", String(opts.concurrency)], env));
  const exits = await Promise.all(spiders.map((s) => s.exited));
  const wall = (performance.now() - t0) / 1000;
  if (exits.some((e) => e.code !== 0)) throw new Error(`a spider failed: ${JSON.stringify(exits)}`);
  const log = sim.requests();
  const pages = log.length;
  const first = Date.parse(log[0]!.at);
  const last = Date.parse(log.at(-1)!.at);
  const crawlSeconds = Math.max((last - first) / 1000, 0.001);
  const spiderCpuMs = spiders.reduce((n, s) => n + Number(s.lines.find((l) => l.msg === "spider stopped")?.cpuMs ?? 0), 0);
  const jobsFound = (await database.reader.keyword.aggregate({ _sum: { jobsFound: true } }))._sum.jobsFound ?? 0;
  const postings = await database.reader.jobPosting.count();

  // 2. The site-side floor: the same pages fetched and parsed, no server, same concurrency.
  const work = log.map((r) => ({ site: r.site, city: r.city, q: r.q, page: r.page }));
  let next = 0;
  const f0 = performance.now();
  await Promise.all(
    Array.from({ length: opts.concurrency * SITES.length }, async () => {
      for (let i = next++; i < work.length; i = next++) {
        const w = work[i]!;
        const adapter = SITE_ADAPTERS[w.site];
        const city = CITIES.find((c) => cityCode(w.site, c) === w.city) ?? w.city;
        const req = adapter.request(sim.url(`/${w.site}`), { city, job: w.q }, w.page);
        const res = await fetch(req.url, req.init);
        adapter.parse(res.status, await res.text(), w.page);
      }
    }),
  );
  const floorSeconds = (performance.now() - f0) / 1000;

  // 3. Crash rounds: SIGKILL at a random page, sweep, resume; count pages fetched twice.
  const crash: { killedAfter: number; resumedAt: number; refetched: number; exact: boolean }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let job = "";
    for (let i = 0; !job; i++) if (pageCount("bench", "qcwy", cityCode("qcwy", "北京"), `崩溃${round}-${i}`, 20) >= 25) job = `崩溃${round}-${i}`;
    await importKeywords(database, "qcwy", [["北京", job]]);
    sim.setFaults("qcwy", { latency: 10 });
    const killAt = 2 + Math.floor(Math.random() * 20);
    const a = spawnSpider("qcwy", fleet, ["--once", "--concurrency", "1"], env);
    await a.waitFor((l) => l.msg === "page done" && l.page === killAt);
    a.kill("SIGKILL");
    await a.exited;
    const kw = await database.reader.keyword.findFirstOrThrow({ where: { sourceId: "qcwy", job } });
    // The dead spider sends no heartbeat: age its last one past staleAfterSeconds, then sweep.
    await database.transaction((tx) => tx.execute(Prisma.sql`UPDATE "Keyword" SET "heartbeatAt" = ${new Date(Date.now() - 86_400_000)} WHERE "id" = ${kw.id}`));
    await app.runJob("stale-sweep");
    const b = spawnSpider("qcwy", fleet, ["--once", "--concurrency", "1"], env);
    const claimed = await b.waitFor((l) => l.msg === "claimed");
    await b.exited;
    const counts = new Map<number, number>();
    for (const r of sim.requests()) if (r.site === "qcwy" && r.q === job) counts.set(r.page, (counts.get(r.page) ?? 0) + 1);
    const done = await database.reader.keyword.findUniqueOrThrow({ where: { id: kw.id } });
    const expectedPages = pageCount("bench", "qcwy", cityCode("qcwy", "北京"), job, 20);
    crash.push({
      killedAfter: killAt,
      resumedAt: claimed.startPage,
      refetched: [...counts.values()].filter((n) => n > 1).length,
      exact: done.status === "COMPLETED" && done.lastCompletedPage === Math.min(expectedPages, 50) && counts.size === Math.min(expectedPages, 50),
    });
    sim.setFaults("qcwy", {});
  }

  // 4. Where a page's time goes, one keyword at a time: the site fetch, the two writes per page,
  // and a heartbeat (the lightest lease-checked mutation: the per-request floor of the server).
  await database.transaction((tx) => tx.execute(Prisma.sql`UPDATE "Source" SET "maxPages" = 1000 WHERE "id" = 'qcwy'`));
  await importKeywords(database, "qcwy", [["北京", "latency"]]);
  const client = new ServerClient({ url: app.url(), token, timeoutMs: 10_000, retryForMs: 5_000, minMs: 10, maxMs: 100 });
  const claim = (await client.request(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "bench-latency", limit: 1 })).claimKeywords[0]!;
  const lease = { keywordId: claim.keyword.id, leaseToken: claim.leaseToken };
  const steps = { "site fetch + parse": 0, submitJobPostings: 0, reportPageProgress: 0, "heartbeat (server floor)": 0 };
  const N = opts.quick ? 50 : 300;
  const search = CITIES.map((c) => ({ city: c, job: jobs(PER_SITE)[0]! }));
  for (let p = 1; p <= N; p++) {
    let t = performance.now();
    const lap = (k: keyof typeof steps) => {
      const now = performance.now();
      steps[k] += now - t;
      t = now;
    };
    const kw = search[p % search.length]!;
    const req = qcwy.request(sim.url("/qcwy"), kw, 1);
    const res = await fetch(req.url, req.init);
    const parsed = qcwy.parse(res.status, await res.text(), 1);
    lap("site fetch + parse");
    const sub = await client.request(SubmitJobPostingsDocument, { ...lease, page: p, postings: parsed.postings });
    lap("submitJobPostings");
    await client.request(ReportPageProgressDocument, { input: { ...lease, page: p, jobsFound: sub.submitJobPostings.accepted } });
    lap("reportPageProgress");
    await client.request(HeartbeatDocument, lease);
    lap("heartbeat (server floor)");
  }

  // 5. The server's own ceiling for this fleet: lease-checked no-op mutations (heartbeats) at the
  // fleet's concurrency. A page costs two mutations, so pages/s can at most reach half of it.
  const inFlight = opts.concurrency * SITES.length;
  await importKeywords(database, "qcwy", crossProduct(Array.from({ length: inFlight }, (_, i) => `hb${i}`), ["heartbeat"]));
  const hbClaims = (await client.request(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "bench-hb", limit: inFlight })).claimKeywords;
  const HB = opts.quick ? 300 : 2000;
  let sent = 0;
  const h0 = performance.now();
  await Promise.all(
    hbClaims.map(async (c) => {
      while (sent++ < HB) await client.request(HeartbeatDocument, { keywordId: c.keyword.id, leaseToken: c.leaseToken });
    }),
  );
  const heartbeatsPerSec = HB / ((performance.now() - h0) / 1000);

  const rows = [
    ["keywords (3 sites)", String(PER_SITE * 3)],
    ["pages fetched", String(pages)],
    ["jobs found / postings stored (deduplicated)", `${jobsFound} / ${postings}`],
    ["end to end, pages/s (first to last site request)", (pages / crawlSeconds).toFixed(1)],
    ["end to end, pages/s (wall, incl. 3 spider start-ups)", (pages / wall).toFixed(1)],
    ["spider processes' CPU per page, ms (incl. start-up)", (spiderCpuMs / pages).toFixed(2)],
    ["site-side floor, pages/s (fetch + parse only, no server)", (pages / floorSeconds).toFixed(1)],
    ["ratio end to end / floor", (pages / crawlSeconds / (pages / floorSeconds)).toFixed(3)],
    [`server ceiling: heartbeats/s at C=${inFlight} (÷ 2 = pages/s at most)`, `${heartbeatsPerSec.toFixed(0)} (${(heartbeatsPerSec / 2).toFixed(0)})`],
    ["ratio end to end / server ceiling", (pages / crawlSeconds / (heartbeatsPerSec / 2)).toFixed(3)],
    ...Object.entries(steps).map(([k, v]) => [`one page, one keyword: ${k}, ms`, (v / N).toFixed(2)]),
    ["crash rounds", String(crash.length)],
    ["pages re-fetched over all crash rounds", `${crash.reduce((n, c) => n + c.refetched, 0)} (at most 1 per round allowed)`],
    ["crash rounds exact (completed, every page, none lost)", `${crash.filter((c) => c.exact).length}/${crash.length}`],
  ];
  console.log(`\nSpider fleet on ${opts.db}, concurrency ${opts.concurrency} per spider\n`);
  console.log("| measure | value |\n|---|---|");
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
  console.log("\ncrash rounds:", crash.map((c) => `killed after ${c.killedAfter}, resumed at ${c.resumedAt}, re-fetched ${c.refetched}`).join("; "));
} finally {
  await sim.stop();
  await app.stop();
  await db.drop();
}
