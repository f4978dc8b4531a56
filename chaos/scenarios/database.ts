// Database trouble under load, against a server process that is never restarted:
// - SQLite: another process takes the write lock for longer than the server waits for it;
// - PostgreSQL: every backend of the server's database is terminated (pg_terminate_backend), a few
//   times in a row — the test database only; with `--pg-restart <command>` the PostgreSQL server
//   itself is then restarted mid-load (never by default: it takes down the whole cluster).
// While it lasts, every failed request must get a typed error (extensions.code); reads go on where
// the database allows; once the fault is gone, writes succeed again without a restart.
import { exec, spawn } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { createToken, Role } from "../../server/src/auth/tokens.ts";
import { crossProduct, importKeywords } from "../../server/src/keywords/import.ts";
import { postgresUnavailable, preparedTestDatabase } from "../../server/test/databases.ts";
import { cities, middayTimeZone } from "../../server/test/harness.ts";
import { spawnServer } from "../../server/test/process.ts";
import { Checks, type Provider, type Scenario, gql, sleep } from "../lib.ts";

const CLAIM = `mutation { claimKeywords(source: "qcwy", crawlerId: "chaos-db", limit: 100) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;
const STATS = `{ stats(source: "qcwy") { pagesCrawled } }`;
const root = new URL("../..", import.meta.url).pathname;

/** Hold SQLite's write lock from another process for `ms`; resolves once it holds it. */
function holdSqliteLock(path: string, ms: number) {
  const script = `const D = require(${JSON.stringify(`${root}node_modules/better-sqlite3`)}); const db = new D(${JSON.stringify(path)}); db.exec("BEGIN IMMEDIATE"); console.log("locked"); setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return new Promise<{ exited: Promise<void> }>((resolve) => child.stdout!.once("data", () => resolve({ exited })));
}

async function terminateBackends(url: string) {
  const dbName = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" });
  await admin.connect();
  try {
    const r = await admin.query(`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
    return r.rows[0].n as number;
  } finally {
    await admin.end();
  }
}

async function run(provider: Provider, quick: boolean, c: Checks, pgRestart?: string) {
  const { tdb, db } = await preparedTestDatabase(provider);
  await importKeywords(db, "qcwy", crossProduct(cities(100), ["db"]));
  const token = (await createToken(db, Role.SPIDER, "chaos")).token;
  await db.close();
  const server = await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: middayTimeZone() });
  const codes = new Map<string, number>();
  let ok = 0;
  let untyped = 0;
  let fiveHundreds = 0;
  const samples: string[] = [];
  let stop = false;
  let phase: "before" | "fault" | "after" = "before";
  const okIn = { before: 0, fault: 0, after: 0 };
  const readsOk = { fault: 0, failed: 0 };
  try {
    const claims = (await gql(server.url, CLAIM, {}, token)).json.data.claimKeywords as { keyword: { id: string }; leaseToken: string }[];
    let i = 0;
    const worker = async () => {
      while (!stop) {
        const n = i++;
        const cl = claims[n % claims.length]!;
        const page = (Math.floor(n / claims.length) % 50) + 1;
        const a = await gql(server.url, REPORT, { i: { keywordId: cl.keyword.id, leaseToken: cl.leaseToken, page, jobsFound: 1 } }, token).catch((e) => ({ status: 0, json: undefined, text: String(e) }));
        if (a.json?.data?.reportPageProgress) {
          ok++;
          okIn[phase]++;
          continue;
        }
        if (a.status >= 500) fiveHundreds++;
        const code = a.json?.errors?.[0]?.extensions?.code;
        if (!code) {
          untyped++;
          if (samples.length < 3) samples.push(`HTTP ${a.status} ${a.text.slice(0, 200)}`);
        } else codes.set(`${code} (HTTP ${a.status})`, (codes.get(`${code} (HTTP ${a.status})`) ?? 0) + 1);
        await sleep(20);
      }
    };
    const reader = async () => {
      while (!stop) {
        const a = await gql(server.url, STATS, {}, token).catch(() => undefined);
        if (phase === "fault") a?.json?.data?.stats ? readsOk.fault++ : readsOk.failed++;
        await sleep(50);
      }
    };
    const workers = [...Array.from({ length: 8 }, worker), reader()];
    await sleep(500);
    phase = "fault";
    let fault: string;
    if (provider === "sqlite") {
      const holdMs = quick ? 11_000 : 13_000; // the server gives up after 10 s
      const lock = await holdSqliteLock(tdb.url.slice("file:".length), holdMs);
      fault = `write lock held by another process for ${holdMs / 1000} s`;
      await lock.exited;
    } else {
      let killed = 0;
      const rounds = quick ? 2 : 5;
      for (let r = 0; r < rounds; r++) {
        killed += await terminateBackends(tdb.url);
        await sleep(300);
      }
      fault = `pg_terminate_backend on the test database ×${rounds} (${killed} backends)`;
      if (pgRestart) {
        const t = Date.now();
        await promisify(exec)(pgRestart, { timeout: 120_000 });
        fault += `, then the PostgreSQL server restarted (\`${pgRestart}\`, ${((Date.now() - t) / 1000).toFixed(1)} s)`;
      }
    }
    phase = "after";
    // Recovery: writes go through again, same server process.
    const t0 = Date.now();
    while (okIn.after < 50 && Date.now() - t0 < 30_000) await sleep(50);
    stop = true;
    await Promise.all(workers);
    c.ok(okIn.after >= 50, `${provider}: writes did not recover (${okIn.after} ok in 30 s after the fault)`);
    const otherCodes = [...codes.keys()].filter((k) => !k.startsWith("DATABASE_UNAVAILABLE (HTTP 503)"));
    c.equal(otherCodes, [], `${provider}: refusals other than DATABASE_UNAVAILABLE (HTTP 503)`);
    c.equal(untyped, 0, `${provider}: failed requests without a code (${samples.join(" | ")})`);
    c.ok(server.child.exitCode === null && server.child.signalCode === null, `${provider}: server process exited (${server.child.exitCode ?? server.child.signalCode}): ${server.output().split("\n").filter((l) => !l.includes('"level":30')).join(" ").slice(-600)}`);
    if (process.env.CHAOS_DEBUG) console.error(server.output().split("\n").filter((l) => !l.includes('"level":30')).join("\n"));
    if (provider === "sqlite") c.ok(readsOk.fault > 0 && readsOk.failed === 0, `${provider}: reads during the lock: ${readsOk.fault} ok, ${readsOk.failed} failed`);
    const failed = [...codes.values()].reduce((a, b) => a + b, 0);
    return `${provider}: ${fault}; ${failed} writes refused (${[...codes].map(([k, v]) => `${k} ×${v}`).join(", ") || "none"}), ${untyped} untyped; ${okIn.after >= 50 ? "recovered" : "NOT recovered"} without a restart${provider === "sqlite" ? `; ${readsOk.fault} reads answered during the lock` : ""}`;
  } finally {
    stop = true;
    await server.kill();
    await tdb.drop();
  }
}

export const database: Scenario = {
  name: "database",
  async run(ctx) {
    const c = new Checks();
    const providers: Provider[] = process.env.CHAOS_DB_ONLY === "postgres" ? [] : ["sqlite"];
    const why = await postgresUnavailable();
    if (!why) providers.push("postgres");
    else if (process.env.CI === "true") c.ok(false, `CI=true but ${why}`);
    const lines: string[] = [];
    const bar = ctx.progress(providers.length);
    for (const p of providers) {
      try {
        lines.push(await run(p, ctx.quick, c, ctx.pgRestart));
      } catch (e) {
        c.ok(false, `${p}: ${(e as Error).message.split("\n")[0]}`);
      }
      bar.tick();
    }
    bar.done();
    return {
      tried: `under 8 writers + 1 reader: SQLite write lock held by another process past the server's 10 s wait; PostgreSQL backends of the test database terminated${ctx.pgRestart ? ", then the PostgreSQL server restarted" : " (a restart of the server itself: --pg-restart <command>)"}${why ? ` (PostgreSQL skipped: ${why})` : ""}`,
      survived: lines.join(" / "),
      checks: c.count,
      failures: c.failures,
      details: { results: lines },
    };
  },
};
