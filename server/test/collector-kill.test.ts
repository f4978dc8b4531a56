// A collector run survives its server being killed (SIGKILL) mid-run: after a restart the task reads
// STOPPED once its heartbeat is stale, the next run resumes the unvisited offsets, and the sink ends
// with every fresh record once (a batch published but not committed before the kill is deduplicated
// by key, and counted once).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstreamSim, type RunningUpstreamSim } from "../../spiders/sim/upstream/server.ts";
import { createToken, Role } from "../src/auth/tokens.ts";
import { crawlDay } from "../src/crawl/crawl-day.ts";
import { type Database, openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase, testProviders } from "./databases.ts";
import { middayTimeZone } from "./harness.ts";
import { spawnServer, type ServerProcess } from "./process.ts";
import { CREATE, freshKeys, START, TASK } from "./collector-fixtures.ts";

const TOTAL = 4_000;
const BATCH = 50;

describe.each(await testProviders())("collector run killed (SIGKILL) on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  let u: RunningUpstreamSim;
  let server: ServerProcess | undefined;
  let token: string;
  const zone = middayTimeZone(); // the real clock: keep midnight out of the way
  const today = crawlDay(new Date(), zone);

  beforeAll(async () => {
    tdb = await createTestDatabase(provider);
    await migrate(tdb.url);
    db = await openDatabase(tdb.url);
    token = (await createToken(db, Role.ADMIN, "killer")).token;
    u = await startUpstreamSim({ initial: TOTAL, endDay: today, spanDays: 60, faults: { latencyMs: 4 } });
  });
  afterAll(async () => {
    await server?.kill();
    await u?.close();
    await db?.close();
    await tdb?.drop();
  });

  async function gql(query: string, variables: Record<string, unknown>) {
    const r = await fetch(server!.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await r.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
    return body;
  }
  const progress = async (id: string) => (await gql(TASK, { id })).data.collectorTask;
  async function until(id: string, pred: (t: any) => boolean, ms = 30_000) {
    for (const end = Date.now() + ms; ; ) {
      const t = await progress(id);
      if (pred(t)) return t;
      if (Date.now() > end) throw new Error(`condition not met: ${JSON.stringify(t.progress)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("resumes the unvisited offsets after a restart; every fresh record stored and counted once", async () => {
    const env = { DATABASE_URL: tdb.url, CRAWL_TZ: zone, COLLECTOR_STALE_RUN_MS: "2000" };
    server = await spawnServer(env);
    const created = await gql(CREATE, { input: { name: "killed", url: u.url, batchSize: BATCH, filterDays: 20, maxExpiredBatches: 0 } });
    const id: string = created.data.createCollectorTask.id;
    // The upstream holds the request after the killAt-th batch: the kill lands mid-run, on a fetch
    // in flight, with exactly killAt batches committed.
    const killAt = 5 + Math.floor(Math.random() * 30);
    u.sim.onRequest = (offset) => {
      if (offset === TOTAL - (killAt + 1) * BATCH) u.sim.setFaults({ latencyMs: 60_000 });
    };
    await gql(START, { id });
    await until(id, (t) => t.progress.coveredCount === killAt * BATCH);
    await server.kill("SIGKILL");
    u.sim.onRequest = undefined;
    u.sim.setFaults({ latencyMs: 4 });

    server = await spawnServer(env);
    const orphan = await progress(id);
    expect(orphan.progress.coveredCount).toBe(killAt * BATCH);
    // Until its heartbeat is stale the dead run still holds the task; then it reads STOPPED.
    await until(id, (t) => t.progress.status === "STOPPED");
    expect((await gql(START, { id })).errors).toBeUndefined();
    const done = await until(id, (t) => t.progress.status !== "RUNNING");

    const expected = freshKeys(u.sim, 20, 0, TOTAL, today);
    expect(done.progress).toMatchObject({ status: "COMPLETED", coveredCount: TOTAL, producedCount: expected.size, filteredCount: expected.size });
    expect(done.progress.coveredRanges).toEqual([{ from: 0, to: TOTAL }]);
    expect(done.runs.map((r: { status: string; trigger: string }) => r.status)).toEqual(["COMPLETED", "STOPPED"]);
    expect(done.runs[1].error).toMatch(/interrupted/);
    // The second run fetched only what the first had not covered.
    expect(done.runs[0].fetchedCount).toBe(TOTAL - orphan.progress.coveredCount);
    const rows = await db.reader.collectorRecord.findMany({ where: { taskId: Number(id) }, select: { key: true } });
    expect(rows).toHaveLength(expected.size);
    expect(new Set(rows.map((r) => r.key))).toEqual(expected);
  });
});
