// `npm run demo`: the whole thing moving on one machine. Builds the dashboard if it is stale, starts
// the server (a fresh SQLite file in .data/demo.db), the job-board simulator (a little latency and a
// few 503s, so retries show) with the collector's upstream at /upstream (growing, a little slow),
// creates tokens, imports 30 keywords per site, runs one spider per site, and creates and starts
// one collector task against the upstream (re-run every 20 s by its schedule, so appended records
// keep arriving). Shows each site's and the collector's progress from the server's own API until
// every keyword is done (or Ctrl-C). Spider logs go to .data/demo-logs/<site>.log. The dashboard and
// GraphiQL stay open at the printed URLs while it runs.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import cliProgress from "cli-progress";
import { parse } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createToken, Role } from "../server/src/auth/tokens.ts";
import { openDatabase } from "../server/src/db/client.ts";
import { ensureBuild } from "../web/build.ts";
import { SITES } from "./sim/data.ts";
import { createSimServer } from "./sim/server.ts";
import { createUpstreamHandler, UpstreamSim } from "./sim/upstream/server.ts";
import { ServerClient } from "./src/runtime/server-client.ts";

const root = new URL("..", import.meta.url).pathname;
const PORT = Number(process.env.PORT ?? 4000);
const SIM_PORT = Number(process.env.SIM_PORT ?? 4100);
const DATA = join(root, ".data");
const DB_URL = `file:${join(DATA, "demo.db")}`;
const API = `http://127.0.0.1:${PORT}/graphql`;
const CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都"];
const JOBS = ["前端", "后端", "测试", "产品经理", "数据分析"];
/** The collector task: small batches from a slowish upstream, so its progress bar visibly moves. */
const COLLECTOR_TASK = { name: "demo-upstream", batchSize: 50, filterDays: 14, maxExpiredBatches: 3, schedule: "*/20 * * * * *" };

const children: ChildProcess[] = [];
// node with tsx's loader, one process each (the tsx CLI would relay our SIGTERM and SIGKILL a
// child slow to acknowledge it, cutting a spider's release short).
const loader = new URL("../node_modules/tsx/dist/loader.mjs", import.meta.url).href;
function start(args: string[], env: Record<string, string>, logFile: string) {
  const out = createWriteStream(logFile);
  const child = spawn(process.execPath, ["--import", loader, ...args], { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  children.push(child);
  return child;
}

// The spider's own client (retries included) for the few admin and stats calls the demo makes.
const client = (token: string) =>
  new ServerClient({ url: API, token, timeoutMs: 10_000, retryForMs: 10_000, minMs: 100, maxMs: 1_000 });
const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
  client(token).request(parse(query) as TypedDocumentNode<any, Record<string, unknown>>, variables);

for (const f of ["demo.db", "demo.db-wal", "demo.db-shm"]) rmSync(join(DATA, f), { force: true });
mkdirSync(join(DATA, "demo-logs"), { recursive: true });

// The dashboard the server serves at / (built when web/dist is missing or older than its sources).
ensureBuild();

// The simulator, in this process: a little latency and some 503s per site, and the collector's
// upstream at /upstream, growing by 20 records every 5 s and answering in 200 ms.
const upstream = new UpstreamSim({ growEveryMs: 5_000, growBy: 20, faults: { latencyMs: 200 } });
const upstreamHandler = createUpstreamHandler(upstream, "/upstream");
const sim = createSimServer({
  seed: "demo",
  faults: Object.fromEntries(SITES.map((s) => [s, { latency: 40, error: 0.05 }])),
  mounts: [{ prefix: "/upstream", handler: (req, res, body) => void upstreamHandler(req, res, body) }],
});
await sim.start(SIM_PORT);

const server = start([join(root, "server/src/main.ts")], { DATABASE_URL: DB_URL, PORT: String(PORT), HOST: "127.0.0.1" }, join(DATA, "demo-logs/server.log"));
for (let i = 0; ; i++) {
  if (server.exitCode !== null) throw new Error(`the server exited; see ${join(DATA, "demo-logs/server.log")}`);
  const up = await fetch(`http://127.0.0.1:${PORT}/healthz`).then((r) => r.ok, () => false);
  if (up) break;
  if (i > 300) throw new Error("the server did not start in 30 s");
  await new Promise((r) => setTimeout(r, 100));
}

const db = await openDatabase(DB_URL);
const admin = (await createToken(db, Role.ADMIN, "demo-admin")).token;
const spiderToken = (await createToken(db, Role.SPIDER, "demo-spider")).token;
await db.close();
for (const site of SITES) {
  await gql(admin, `mutation($s: ID!, $c: [String!]!, $j: [String!]!) { importKeywords(source: $s, cities: $c, jobs: $j) { created } }`, { s: site, c: CITIES, j: JOBS });
}

const { createCollectorTask: task } = await gql(
  admin,
  `mutation($input: CreateCollectorTaskInput!) { createCollectorTask(input: $input) { id } }`,
  { input: { ...COLLECTOR_TASK, url: `http://127.0.0.1:${SIM_PORT}/upstream` } },
);
await gql(admin, `mutation($id: ID!) { startCollectorTask(id: $id) { id } }`, { id: task.id });

const spiderEnv = { CRAWL_API_URL: API, CRAWL_TOKEN: spiderToken, SITE_BASE_URL: `http://127.0.0.1:${SIM_PORT}`, SITE_RATE_PER_SEC: "10", SPIDER_POLL_MS: "1000", LOG_LEVEL: "info" };
for (const site of SITES) start([join(root, "spiders/src/cli.ts"), site, "--concurrency", "3"], spiderEnv, join(DATA, `demo-logs/${site}.log`));

console.log(`\nDashboard: http://127.0.0.1:${PORT}/  (Sign in with the admin token ${admin} for the action buttons)`);
console.log(`GraphiQL: http://127.0.0.1:${PORT}/graphql   simulator: http://127.0.0.1:${SIM_PORT}/_sim/requests   upstream: http://127.0.0.1:${SIM_PORT}/upstream/_state   logs: .data/demo-logs/`);
console.log(`Try in GraphiQL: { stats(source: "qcwy") { byStatus { completed crawling } jobsFound } jobPostings(first: 5) { totalCount edges { node { title company city } } } }\n`);

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  bars?.stop();
  // Spiders release what they hold (SIGTERM), then the server and the simulator stop.
  const exits = children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r))));
  for (const c of children.slice(1)) if (c.exitCode === null) process.kill(-c.pid!, "SIGTERM");
  await Promise.all(exits.slice(1));
  if (server.exitCode === null) process.kill(-server.pid!, "SIGTERM");
  await exits[0];
  upstream.close();
  await sim.stop();
  process.exit(code);
}
// SIGHUP too: a closed terminal must not leave the server and the spiders (detached) running.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void stop(0));

const tty = Boolean(process.stdout.isTTY);
const bars = tty
  ? new cliProgress.MultiBar(
      { format: "{site} |{bar}| {value}/{total} keywords · {crawling} crawling · {failed} failed · {pages} pages · {jobs} jobs", hideCursor: true, autopadding: true },
      cliProgress.Presets.shades_classic,
    )
  : undefined;
const rows = new Map(SITES.map((s) => [s, bars?.create(CITIES.length * JOBS.length, 0, { site: s.padEnd(7), crawling: 0, failed: 0, pages: 0, jobs: 0 })]));
const collectorBar = bars?.create(1, 0, {}, { format: "collector |{bar}| {value}/{total} offsets · {status} · {produced} produced · {runs} runs" });
const t0 = Date.now();
for (;;) {
  await new Promise((r) => setTimeout(r, tty ? 500 : 2000));
  if (stopping) break;
  let done = 0;
  let pages = 0;
  for (const site of SITES) {
    const { stats } = await gql(admin, `query($s: ID!) { stats(source: $s) { total jobsFound pagesCrawled byStatus { completed failed crawling } } }`, { s: site });
    const finished = stats.byStatus.completed + stats.byStatus.failed;
    done += finished === stats.total ? 1 : 0;
    pages += stats.pagesCrawled;
    const payload = { site: site.padEnd(7), crawling: stats.byStatus.crawling, failed: stats.byStatus.failed, pages: stats.pagesCrawled, jobs: stats.jobsFound };
    if (bars) rows.get(site)!.update(finished, payload);
    else console.log(JSON.stringify({ site, ...stats }));
  }
  const { collectorTask: c } = await gql(admin, `query($id: ID!) { collectorTask(id: $id) { progress { status total coveredCount producedCount lastError } runs(last: 100) { id } } }`, { id: task.id });
  const p = c.progress;
  if (collectorBar) {
    collectorBar.setTotal(Math.max(1, p.total));
    collectorBar.update(p.coveredCount, { status: p.status, produced: p.producedCount, runs: c.runs.length });
  } else console.log(JSON.stringify({ collector: COLLECTOR_TASK.name, ...p, runs: c.runs.length }));
  if (done === SITES.length) {
    bars?.stop();
    const { jobPostings } = await gql(admin, `{ jobPostings(first: 1) { totalCount } }`);
    console.log(`\nAll keywords done in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${pages} pages, ${jobPostings.totalCount} distinct postings. Stopping.`);
    await stop(0);
  }
}
