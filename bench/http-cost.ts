// npm run bench:http [-- --db sqlite|postgres] [--n 3000] [--rounds 1] [--fields spider]
//                      [--only bare,cycles,store,claims,reports,batch,bullmq] [--prof <dir>]
// What HTTP + GraphQL cost per request for the spider's mutations. The server (and a bare Yoga
// no-op server beside it) run in this process; the load generator runs in a child process, so the
// CPU time per request measured here is the server's alone, steadier than wall time on a shared box;
// the load generator's own CPU time per request is printed beside it.
// Phases: claim (limit 1) → complete at C=1, claims and page reports at C=32, and the same claim →
// complete through the store in-process (the storage floor); `batch`: claim (limit 32) → complete
// 32 at C=8, as npm run bench's batched figure (per keyword). With --rounds R > 1 the phases run R
// times and the best of rounds 2…R is printed last (round 1 warms the JIT). --prof writes a V8 CPU
// profile of each phase (open in Chrome DevTools). `bullmq`: BullMQ's no-op jobs at concurrency 8
// (bench/peers.ts) with the CPU time they cost in all — the Worker's, in this process, and Redis's
// (INFO cpu) — the budget the batched figures compete with. Never asserts a speed.
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { Session } from "node:inspector/promises";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { createSchema, createYoga } from "graphql-yoga";
import { Redis } from "ioredis";
import { bullmqCycles } from "./peers.ts";
import { post } from "./post.ts";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const N = Number(arg("n", "3000"));
const ROUNDS = Number(arg("rounds", "1"));

// --fields spider: what the spiders ask for (spiders/src/operations.graphql); default: ids only, as npm run bench.
const KEYWORD = process.argv.includes("spider")
  ? "id sourceId city job status crawlDate lastCompletedPage totalPages jobsFound pagesCrawled crawlerId retryCount errorMessage heartbeatAt"
  : "id";
const CLAIM = `mutation($c: String!, $n: Int!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: $n) { startPage resumed keyword { ${KEYWORD} } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { ${KEYWORD} } }`;
const COMPLETE = `mutation($i: ReportCrawlCompleteInput!) { reportCrawlComplete(input: $i) { ${KEYWORD} } }`;
const NOOP = `mutation($n: Int) { noop(n: $n) }`;
const COMPLETES = `mutation($i: [ReportCrawlCompleteInput!]!) { reportCrawlsComplete(inputs: $i) { keywordId error { code } } }`;

async function run(total: number, c: number, op: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: c }, async () => { for (let i = next++; i < total; i = next++) await op(i); }));
}

type Phase = { name: string; url: string; token: string | null; n: number };

if (process.argv.includes("--client")) {
  // The load generator: one phase per message, answered when done.
  const leases: { id: string; lease: string }[] = [];
  const cycle = async (p: Phase, w: number) => {
    const [k] = (await post(p.url, p.token, CLAIM, { c: `cycle-${w}`, n: 1 })).claimKeywords;
    await post(p.url, p.token, COMPLETE, { i: { keywordId: k.keyword.id, leaseToken: k.leaseToken, status: "COMPLETED" } });
  };
  const phases: Record<string, (p: Phase) => Promise<void>> = {
    bare1: (p) => run(p.n, 1, async (i) => void (await post(p.url, null, NOOP, { n: i }))),
    bare32: (p) => run(p.n, 32, async (i) => void (await post(p.url, null, NOOP, { n: i }))),
    warm: (p) => run(p.n, 1, async (i) => cycle(p, i)),
    cycles: (p) => run(p.n, 1, async (i) => (i % 2 ? undefined : cycle(p, 1))),
    claims: (p) => (leases.length = 0, run(p.n, 32, async (i) => {
      const c = (await post(p.url, p.token, CLAIM, { c: `bench-${i % 32}`, n: 1 })).claimKeywords[0];
      leases.push({ id: c.keyword.id, lease: c.leaseToken });
    })),
    batch: (p) => run(p.n / 32, 8, async (i) => {
      const ks: { keyword: { id: string }; leaseToken: string }[] = (await post(p.url, p.token, CLAIM, { c: `batch-${i % 8}`, n: 32 })).claimKeywords;
      const done = (await post(p.url, p.token, COMPLETES, { i: ks.map((k) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: "COMPLETED" })) })).reportCrawlsComplete;
      if (done.some((r: { error?: unknown }) => r.error)) throw new Error(`batch refused: ${JSON.stringify(done.slice(0, 2))}`);
    }),
    reports: (p) => run(p.n, 32, async (i) => {
      const l = leases[i % leases.length]!;
      const page = Math.floor(i / leases.length) + 1;
      await post(p.url, p.token, REPORT, { i: { keywordId: l.id, leaseToken: l.lease, page, totalPages: 50, jobsFound: 10 } });
    }),
  };
  process.on("message", (p: Phase) => {
    const cpu0 = process.cpuUsage();
    phases[p.name]!(p).then(
      () => {
        const cpu = process.cpuUsage(cpu0);
        process.send!({ cpuMicros: cpu.user + cpu.system });
      },
      (e) => { console.error(e); process.exit(1); },
    );
  });
} else {
  const { buildApp } = await import("../server/src/app.ts");
  const { createToken, Role } = await import("../server/src/auth/tokens.ts");
  const { crossProduct, importKeywords } = await import("../server/src/keywords/import.ts");
  const { CrawlStatus } = await import("../server/src/crawl/rules.ts");
  const { createTestDatabase } = await import("../server/test/databases.ts");
  const provider = arg("db", "sqlite") as "sqlite" | "postgres";
  const only = arg("only", "bare,cycles,store,claims,reports,batch").split(",");
  const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  const profileDir = arg("prof", "");
  const session = profileDir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
  }
  const child = fork(fileURLToPath(import.meta.url), ["--client", ...process.argv.slice(2)], { execArgv: ["--import", "tsx"] });
  /** CPU time the load generator spent on the phases asked since the last measure(). */
  let clientMicros = 0;
  const ask = (p: Phase) =>
    new Promise<void>((resolve) => {
      child.once("message", (m: { cpuMicros: number }) => {
        clientMicros += m.cpuMicros;
        resolve();
      });
      child.send(p);
    });

  const best = new Map<string, { wall: number; cpu: number; client: number }>();
  let round = 0;
  /**
   * Runs a phase; prints requests/s, wall µs per request, this process's (the server's) CPU µs per
   * request and the load generator's (0 for in-process phases).
   */
  async function measure(what: string, n: number, go: () => Promise<void>) {
    if (session) await session.post("Profiler.start");
    clientMicros = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await go();
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    if (session) {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(`${profileDir}/${what.replace(/[^a-z0-9]+/gi, "-")}.cpuprofile`, JSON.stringify(profile));
    }
    const wall = (s * 1e6) / n;
    const cpuPer = (cpu.user + cpu.system) / n;
    const clientPer = clientMicros / n;
    console.log(`${what.padEnd(48)} ${(n / s).toFixed(0).padStart(6)}/s  ${wall.toFixed(0).padStart(5)} µs wall  ${cpuPer.toFixed(0).padStart(5)} µs server cpu  ${clientPer.toFixed(0).padStart(4)} µs client cpu`);
    const b = best.get(what);
    if (round > 0) best.set(what, { wall: Math.min(wall, b?.wall ?? wall), cpu: Math.min(cpuPer, b?.cpu ?? cpuPer), client: Math.min(clientPer, b?.client ?? clientPer) });
  }

  if (only.includes("bare")) {
    const yoga = createYoga({
      schema: createSchema({ typeDefs: `type Query { ok: Boolean } type Mutation { noop(n: Int): Boolean }`, resolvers: { Mutation: { noop: () => true } } }),
      logging: false,
    });
    const server = createServer(yoga);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    await ask({ name: "bare1", url, token: null, n: 300 });
    await measure("bare Yoga no-op, C=1", N, () => ask({ name: "bare1", url, token: null, n: N }));
    await measure("bare Yoga no-op, C=32", N, () => ask({ name: "bare32", url, token: null, n: N }));
    await new Promise((r) => server.close(r));
  }

  const db = await createTestDatabase(provider);
  const app = await buildApp({ config: { DATABASE_URL: db.url, LOG_LEVEL: "silent" }, logger: pino({ level: "silent" }), scheduler: false });
  await app.start(0, "127.0.0.1");
  const url = app.url();
  await importKeywords(app.services.database, "qcwy", crossProduct(Array.from({ length: ROUNDS * 3 * N + 600 }, (_, i) => `city${i}`), ["bench"]));
  const { token } = await createToken(app.services.database, Role.SPIDER, "bench");
  await ask({ name: "warm", url, token, n: 200 });
  for (round = 0; round < ROUNDS; round++) {
    if (only.includes("cycles")) await measure(`claim→complete requests, HTTP, C=1 (${provider})`, N, () => ask({ name: "cycles", url, token, n: N }));
    if (only.includes("store")) {
      const store = app.services.store;
      await measure(`claim→complete store calls, in-process, C=1`, N, async () => {
        for (let i = 0; i < N; i += 2) {
          const [k] = await store.claim("qcwy", "store", 1);
          await store.complete({ keywordId: k!.keyword.id, leaseToken: k!.leaseToken, status: CrawlStatus.COMPLETED });
        }
      });
    }
    if (only.includes("claims") || only.includes("reports")) {
      await measure(`claims, HTTP, C=32 (${provider})`, N / 2, () => ask({ name: "claims", url, token, n: N / 2 }));
    }
    if (only.includes("reports")) await measure(`page reports, HTTP, C=32 (${provider})`, N, () => ask({ name: "reports", url, token, n: N }));
    if (only.includes("bullmq")) {
      const redis = new Redis(redisUrl);
      const redisCpu = async () => {
        const info = await redis.info("cpu");
        const field = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(info)![1]);
        return (field("used_cpu_user") + field("used_cpu_sys")) * 1e6;
      };
      // CPU from the moment the jobs are queued: the Worker's (this process) and Redis's.
      let r0 = 0;
      let cpu0 = process.cpuUsage();
      const r = await bullmqCycles(redisUrl, N, 8, async () => {
        r0 = await redisCpu();
        cpu0 = process.cpuUsage();
      });
      const cpu = process.cpuUsage(cpu0);
      const workerPer = (cpu.user + cpu.system) / r.ops;
      const redisPer = ((await redisCpu()) - r0) / r.ops;
      console.log(
        `${"BullMQ no-op jobs, concurrency 8".padEnd(48)} ${(r.ops / r.seconds).toFixed(0).padStart(6)}/s  ${((r.seconds * 1e6) / r.ops).toFixed(0).padStart(5)} µs wall  ${workerPer.toFixed(0).padStart(5)} µs Worker cpu  ${redisPer.toFixed(0).padStart(4)} µs Redis cpu`,
      );
      redis.disconnect();
    }
    if (only.includes("batch")) {
      await measure(`batched keywords, HTTP, C=8 × 32 (${provider})`, N, () => ask({ name: "batch", url, token, n: N }));
      const store = app.services.store;
      await measure(`batched keywords, in-process, C=8 × 32`, N, () =>
        run(N / 32, 8, async (i) => {
          const ks = await store.claim("qcwy", `store-batch-${i % 8}`, 32);
          await store.completeMany(ks.map((k) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: CrawlStatus.COMPLETED })));
        }),
      );
    }
  }
  if (ROUNDS > 1) {
    console.log(`best of rounds 2–${ROUNDS}:`);
    for (const [what, b] of best) {
      console.log(`${what.padEnd(48)} ${(1e6 / b.wall).toFixed(0).padStart(6)}/s  ${b.wall.toFixed(0).padStart(5)} µs wall  ${b.cpu.toFixed(0).padStart(5)} µs server cpu  ${b.client.toFixed(0).padStart(4)} µs client cpu`);
    }
  }
  child.kill();
  await app.stop();
  await db.drop();
}
