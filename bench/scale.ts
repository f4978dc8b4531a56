// npm run bench:scale [-- --sizes 10000,100000,1000000] [--db sqlite|postgres]  (also part of npm run bench)
//
// Claim and stats latency (p50 / p99, in-process through the crawl store) as the keyword table
// grows, each size next to the smallest one measured in the same run. Two moments of a crawl day:
// morning (every keyword still fresh) and night (every keyword already claimed today, so a claim
// finds nothing: the case that must not walk the whole table). Then the next midnight: the day
// rollover turns every keyword's state IDLE, timed per keyword (it must grow with the table, not
// with its square).
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Command } from "commander";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { Prisma } from "../generated/sqlite/client.ts";
import { buildApp } from "../server/src/app.ts";
import { crawlStats } from "../server/src/crawl/stats.ts";
import { migrate } from "../server/src/db/migrate.ts";
import { createTestDatabase } from "../server/test/databases.ts";

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function latencies(n: number, fn: () => Promise<unknown>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return { p50: pct(out, 50), p99: pct(out, 99) };
}

/** Bulk-load `n` keywords of source qcwy straight through the driver. */
async function load(provider: "sqlite" | "postgres", url: string, n: number) {
  if (provider === "sqlite") {
    const raw = new BetterSqlite3(url.slice("file:".length));
    const t = new Date().toISOString().replace("Z", "+00:00");
    raw.prepare(`INSERT INTO "Source" (id, name, "maxPages", "updatedAt", "keywordCount") VALUES ('qcwy', 'qcwy', 50, ?, ?)`).run(t, n);
    const ins = raw.prepare(`INSERT INTO "Keyword" ("sourceId", city, job, "createdAt", "updatedAt") VALUES ('qcwy', ?, ?, ?, ?)`);
    raw.transaction(() => {
      for (let i = 0; i < n; i++) ins.run(`c${i % 1000}`, `j${Math.floor(i / 1000)}`, t, t);
    })();
    raw.close();
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`INSERT INTO "Source" (id, name, "maxPages", "updatedAt", "keywordCount") VALUES ('qcwy', 'qcwy', 50, now(), $1)`, [n]);
  await c.query(
    `INSERT INTO "Keyword" ("sourceId", city, job, "updatedAt") SELECT 'qcwy', 'c' || (g % 1000), 'j' || (g / 1000), now() FROM generate_series(0, $1 - 1) g`,
    [n],
  );
  await c.query(`VACUUM ANALYZE "Keyword"`);
  await c.end();
}

async function vacuum(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`VACUUM ANALYZE "Keyword"`);
  await c.end();
}

/** Microseconds per keyword the rollover spent. */
export const rolloverPerKeyword = (r: ScaleRow) => (r.rollover.seconds * 1e6) / Math.max(1, r.rollover.keywords);

export interface ScaleRow {
  keywords: number;
  claimMorning: { p50: number; p99: number };
  statsMorning: { p50: number; p99: number };
  claimNight: { p50: number; p99: number };
  statsNight: { p50: number; p99: number };
  /** The day rollover over every keyword: how many it changed and how long it took. */
  rollover: { keywords: number; seconds: number };
}
type Latency = { p50: number; p99: number };

/** Claim and stats latency at each size, on a fresh database per size. */
export async function runScale(provider: "sqlite" | "postgres", sizes: number[], samples: number): Promise<ScaleRow[]> {
const rows: ScaleRow[] = [];
for (const n of sizes) {
  const db = await createTestDatabase(provider);
  await migrate(db.url);
  process.stderr.write(`loading ${n} keywords…\n`);
  await load(provider, db.url, n);
  const app = await buildApp({ config: { DATABASE_URL: db.url, LOG_LEVEL: "silent" }, logger: pino({ level: "silent" }), scheduler: false });
  const { store, database, calendar } = app.services;
  const claimMorning = await latencies(samples, () => store.claim("qcwy", "bench", 1));
  const statsMorning = await latencies(samples, () => crawlStats(database, calendar, "qcwy"));
  // Night: every keyword was claimed today (and completed).
  await database.transaction(async (tx) => {
    await tx.execute(Prisma.sql`UPDATE "Keyword" SET "crawlDate" = ${calendar.today()}, "status" = 'COMPLETED', "lastRequestedAt" = ${calendar.now()}`);
  });
  // A day of claims updates rows gradually and autovacuum keeps the planner's statistics current;
  // after this one bulk UPDATE do what it would have done.
  if (provider === "postgres") await vacuum(db.url);
  const claimNight = await latencies(samples, () => store.claim("qcwy", "bench", 1));
  const statsNight = await latencies(samples, () => crawlStats(database, calendar, "qcwy"));
  // The next midnight: every keyword holds the day before's state.
  await database.transaction((tx) => tx.execute(Prisma.sql`UPDATE "Keyword" SET "crawlDate" = '2000-01-01'`));
  if (provider === "postgres") await vacuum(db.url);
  const t0 = performance.now();
  const changed = [...(await store.rollover()).values()].reduce((a, b) => a + b, 0);
  const rollover = { keywords: changed, seconds: (performance.now() - t0) / 1000 };
  rows.push({ keywords: n, claimMorning, statsMorning, claimNight, statsNight, rollover });
  await app.stop();
  await db.drop();
}

return rows;
}

/** The worse of morning and night p50, the figure the ratios compare. */
export const worstP50 = (a: Latency, b: Latency) => Math.max(a.p50, b.p50);

export function scaleTable(provider: string, rows: ScaleRow[]) {
  const base = rows[0]!;
  const ms = (x: number) => x.toFixed(3);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const out = [
    `${provider}: latency in ms (p50 / p99), and p50 relative to ${base.keywords} keywords; the day rollover of every keyword (s, µs per keyword)`,
    "",
    "| keywords | claim, morning | stats, morning | claim, night | stats, night | claim ratio | stats ratio | rollover | rollover per keyword |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    out.push(
      `| ${r.keywords} | ${ms(r.claimMorning.p50)} / ${ms(r.claimMorning.p99)} | ${ms(r.statsMorning.p50)} / ${ms(r.statsMorning.p99)} | ` +
        `${ms(r.claimNight.p50)} / ${ms(r.claimNight.p99)} | ${ms(r.statsNight.p50)} / ${ms(r.statsNight.p99)} | ` +
        `${ratio(worstP50(r.claimMorning, r.claimNight), worstP50(base.claimMorning, base.claimNight))} | ` +
        `${ratio(worstP50(r.statsMorning, r.statsNight), worstP50(base.statsMorning, base.statsNight))} | ` +
        `${r.rollover.seconds.toFixed(2)} s | ${rolloverPerKeyword(r).toFixed(1)} µs |`,
    );
  }
  return out.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const opts = new Command("bench:scale")
    .option("--sizes <list>", "keyword counts, comma-separated", "10000,100000,1000000")
    .option("--db <provider>", "sqlite or postgres", "sqlite")
    .option("--samples <n>", "operations timed per measurement", "300")
    .parse()
    .opts<{ sizes: string; db: "sqlite" | "postgres"; samples: string }>();
  const rows = await runScale(opts.db, opts.sizes.split(",").map(Number), Number(opts.samples));
  console.log(`\n${scaleTable(opts.db, rows)}`);
}
