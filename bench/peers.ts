// The established job queues the bench compares against, each doing the same job as a claim →
// complete cycle with nothing in between: pg-boss (fetch + complete, on PostgreSQL) and BullMQ
// (a Worker running no-op jobs, on Redis). Each run starts from a fresh schema / queue of its own
// and removes it afterwards.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createSchema, createYoga } from "graphql-yoga";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PgBoss } from "pg-boss";
import { Queue, Worker } from "bullmq";

/** Runs a load against the pg-boss HTTP endpoint for `queue` (bench/load.ts, in its own process). */
export type HttpLoad = (endpoint: string, queue: string) => Promise<{ ops: number; seconds: number }>;

/**
 * pg-boss: `jobs` jobs queued, then `concurrency` workers each loop fetch(1) → complete until the
 * queue is empty. Returns jobs completed per second. In-process as pg-boss is used; with `http`,
 * the loop runs in the load generator against a bare graphql-yoga server whose two mutations call
 * pg-boss — the HTTP + GraphQL layer a remote spider would need, the same one under our own HTTP
 * figures.
 */
export async function pgBossCycles(url: string, jobs: number, concurrency: number, http?: HttpLoad): Promise<{ ops: number; seconds: number }> {
  const schema = `pgboss_bench_${randomBytes(4).toString("hex")}`;
  const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false, max: Math.max(4, concurrency + 2) });
  boss.on("error", () => {});
  await boss.start();
  const queue = "bench";
  const server = http
    ? createServer(
        createYoga({
          schema: createSchema({
            typeDefs: `type Job { id: ID! } type Query { ok: Boolean }
              type Mutation { fetch(queue: String!): [Job!]! complete(queue: String!, id: ID!): Boolean }`,
            resolvers: {
              Mutation: {
                fetch: (_: unknown, a: { queue: string }) => boss.fetch(a.queue),
                complete: async (_: unknown, a: { queue: string; id: string }) => {
                  await boss.complete(a.queue, a.id);
                  return true;
                },
              },
            },
          }),
          logging: false,
        }),
      )
    : null;
  try {
    await boss.createQueue(queue);
    for (let i = 0; i < jobs; i += 1000) {
      await boss.insert(queue, Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ data: { n: i + j } })));
    }
    if (server && http) {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
      return await http(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, queue);
    }
    const fetchOne = async () => (await boss.fetch(queue))[0]?.id;
    const complete = async (id: string) => void (await boss.complete(queue, id));
    let done = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const id = await fetchOne();
          if (!id) return;
          await complete(id);
          done++;
        }
      }),
    );
    return { ops: done, seconds: (performance.now() - t0) / 1000 };
  } finally {
    if (server?.listening) await new Promise((r) => server.close(r));
    await boss.stop({ graceful: false }).catch(() => {});
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
  }
}

/**
 * BullMQ: `jobs` no-op jobs added, then one Worker at `concurrency` until all completed (timed).
 * `started` is called once the jobs are queued, just before the timed part.
 */
export async function bullmqCycles(
  redisUrl: string,
  jobs: number,
  concurrency: number,
  started?: () => Promise<void>,
): Promise<{ ops: number; seconds: number }> {
  const u = new URL(redisUrl);
  const connection = { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
  const name = `ccp-bench-${randomBytes(4).toString("hex")}`;
  const queue = new Queue(name, { connection });
  try {
    for (let i = 0; i < jobs; i += 1000) {
      await queue.addBulk(
        Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ name: "noop", data: { n: i + j }, opts: { removeOnComplete: true } })),
      );
    }
    let done = 0;
    let finish: () => void = () => {};
    const finished = new Promise<void>((r) => (finish = r));
    await started?.();
    const t0 = performance.now();
    const worker = new Worker(name, async () => {}, { connection, concurrency });
    worker.on("completed", () => {
      if (++done === jobs) finish();
    });
    await finished;
    const seconds = (performance.now() - t0) / 1000;
    await worker.close();
    return { ops: done, seconds };
  } finally {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}
