// npm run bench:instances [-- --quick] [--keywords N] [--concurrency N]
//
// Claims/s through whole server processes (`tsx server/src/main.ts`, as `npm start` runs them), on
// SQLite and on PostgreSQL, with one instance and with two instances on one database; the clients
// are split evenly over the instances. Every configuration runs in this one run, on a fresh
// database, and is printed next to SQLite with one instance. Two instances on one SQLite file work
// (they take turns on its write lock) but are not the scale-out path: that is PostgreSQL. Without
// a reachable PostgreSQL its rows are left out, with the reason. Never asserts a speed.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Command, InvalidArgumentError } from "commander";
import { createToken, Role } from "../server/src/auth/tokens.ts";
import { openDatabase } from "../server/src/db/client.ts";
import { migrate } from "../server/src/db/migrate.ts";
import { seedSources } from "../server/src/db/seed.ts";
import { crossProduct, importKeywords } from "../server/src/keywords/import.ts";
import { createTestDatabase, postgresUnavailable } from "../server/test/databases.ts";
import { spawnServer, type ServerProcess } from "../server/test/process.ts";

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};
const opts = new Command("bench:instances")
  .option("--quick", "a small, fast run (used by the test suite)")
  .option("--keywords <n>", "claims per configuration (one fresh keyword each)", int)
  .option("--concurrency <n>", "concurrent clients, split over the instances", int, 32)
  .option("--out <file>", "where to write the results", "bench/instances-results.json")
  .parse()
  .opts<{ quick?: boolean; keywords?: number; concurrency: number; out: string }>();
const CLAIMS = opts.keywords ?? (opts.quick ? 200 : 4000);
const C = opts.concurrency;

interface Row {
  provider: "sqlite" | "postgres";
  instances: number;
  claims: number;
  seconds: number;
  perSecond: number;
}

const CLAIM = `mutation($c: String!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: 1) { keyword { id } } }`;

async function claim(url: string, token: string, crawlerId: string): Promise<void> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: CLAIM, variables: { c: crawlerId } }),
  });
  const body = (await r.json()) as { data?: { claimKeywords: unknown[] }; errors?: unknown[] };
  if (body.errors || body.data?.claimKeywords.length !== 1) throw new Error(`claim failed: ${JSON.stringify(body)}`);
}

async function measure(provider: "sqlite" | "postgres", instances: number): Promise<Row> {
  const db = await createTestDatabase(provider);
  const servers: ServerProcess[] = [];
  try {
    await migrate(db.url);
    const database = await openDatabase(db.url);
    await seedSources(database);
    // Enough keywords for the warm-up too.
    await importKeywords(database, "qcwy", crossProduct(Array.from({ length: CLAIMS + C }, (_, i) => `city${i}`), ["bench"]));
    const { token } = await createToken(database, Role.SPIDER, "bench");
    await database.close();
    for (let i = 0; i < instances; i++) servers.push(await spawnServer({ DATABASE_URL: db.url, LOG_LEVEL: "info" }));
    // Warm-up: one claim per client (connections, JIT), not timed.
    await Promise.all(Array.from({ length: C }, (_, w) => claim(servers[w % instances]!.url, token, `warm-${w}`)));

    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: C }, async (_, w) => {
        const url = servers[w % instances]!.url;
        while (next++ < CLAIMS) await claim(url, token, `bench-${w}`);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const row = { provider, instances, claims: CLAIMS, seconds, perSecond: CLAIMS / seconds };
    process.stderr.write(`${provider} × ${instances}: ${row.perSecond.toFixed(0)} claims/s\n`);
    return row;
  } finally {
    await Promise.all(servers.map((s) => s.kill("SIGTERM")));
    await db.drop();
  }
}

const noPostgres = await postgresUnavailable();
console.error(`bench:instances: ${CLAIMS} claims per configuration, ${C} clients${opts.quick ? " (quick)" : ""}`);
const rows: Row[] = [];
for (const provider of ["sqlite", "postgres"] as const) {
  if (provider === "postgres" && noPostgres) {
    console.error(`[skip] PostgreSQL rows: ${noPostgres}`);
    continue;
  }
  for (const instances of [1, 2]) rows.push(await measure(provider, instances));
}

const base = rows[0]!;
const find = (p: string, n: number) => rows.find((r) => r.provider === p && r.instances === n);
const ratios: Record<string, number> = {};
for (const r of rows) ratios[`${r.provider} × ${r.instances} vs sqlite × 1`] = r.perSecond / base.perSecond;
const pg1 = find("postgres", 1);
const pg2 = find("postgres", 2);
if (pg1 && pg2) ratios["postgres × 2 vs postgres × 1"] = pg2.perSecond / pg1.perSecond;

// Servers, database and load generator share this machine: say how busy it was.
const load = loadavg().map((l) => l.toFixed(2)).join(" ");
console.log(`\nclaims/s over HTTP, ${C} clients split over the instances, 1 keyword per claim, ${CLAIMS} claims each`);
console.log(`(${cpus().length} CPUs; load average at the end ${load}; servers, database and clients on this one machine)\n`);
console.log(`| database | instances | claims | seconds | claims/s | vs sqlite × 1 |\n|---|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  console.log(`| ${r.provider} | ${r.instances} | ${r.claims} | ${r.seconds.toFixed(2)} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / base.perSecond).toFixed(2)}× |`);
}
console.log(`\n| ratio | value |\n|---|---:|`);
for (const [k, v] of Object.entries(ratios)) console.log(`| ${k} | ${v.toFixed(3)}× |`);

const results = { at: new Date().toISOString(), node: process.version, cpus: cpus().length, loadavg: loadavg(), claims: CLAIMS, concurrency: C, quick: Boolean(opts.quick), rows, ratios };
mkdirSync(join(opts.out, ".."), { recursive: true });
writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
console.error(`\nwrote ${opts.out}`);
