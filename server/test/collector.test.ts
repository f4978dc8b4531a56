// The collector's GraphQL surface on both databases, with the DATABASE sink (records stored and
// deduplicated by key), input checks and typed errors, the tasks file, autostart and schedules.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/sqlite/client.ts";
import { startUpstreamSim, type RunningUpstreamSim } from "../../spiders/sim/upstream/server.ts";
import { testProviders } from "./databases.ts";
import { startServer, type TestServer } from "./harness.ts";
import { CREATE, createTask, freshKeys, RESET, START, STOP, TASK, TODAY, waitUntilDone } from "./collector-fixtures.ts";

const UPDATE = `mutation($id: ID!, $input: UpdateCollectorTaskInput!) { updateCollectorTask(id: $id, input: $input) {
  id name batchSize filterDays schedule sink enabled stream } }`;
const TASKS = `{ collectorTasks { id name progress { status } } }`;

describe.each(await testProviders())("collector over GraphQL on %s", (provider) => {
  let s: TestServer;
  let u: RunningUpstreamSim;

  beforeAll(async () => {
    s = await startServer(provider, { config: { COLLECTOR_MAX_RETRIES: 1, COLLECTOR_RETRY_MIN_MS: 10, COLLECTOR_RETRY_MAX_MS: 20 } });
    u = await startUpstreamSim({ initial: 3_000, endDay: TODAY, spanDays: 60, seed: 7 });
  });
  afterAll(async () => {
    await s?.close();
    await u?.close();
  });

  async function records(taskId: string) {
    return s.app.services.database.reader.collectorRecord.findMany({ where: { taskId: Number(taskId) }, select: { key: true, offset: true } });
  }

  it("DATABASE sink: stores exactly the fresh records; a run after reset publishes them again without a duplicate row", async () => {
    const task = await createTask(s, { name: "db-sink", url: u.url, batchSize: 50, filterDays: 10, maxExpiredBatches: 2 });
    expect(task).toMatchObject({ sink: "DATABASE", stream: null, subject: null, enabled: true, autoStart: false, schedule: null });
    expect(task.progress).toMatchObject({ status: "IDLE", coveredCount: 0, filteredCount: 0, producedCount: 0, run: null });
    const expected = freshKeys(u.sim, 10);

    await s.ok(START, { id: task.id });
    const done = await waitUntilDone(s, task.id);
    expect(done.progress).toMatchObject({ status: "COMPLETED", filteredCount: expected.size, producedCount: expected.size, coveredCount: 3_000 });
    let stored = await records(task.id);
    expect(new Set(stored.map((r) => r.key))).toEqual(expected);
    expect(stored).toHaveLength(expected.size);

    // A reset forgets the progress, not the sink's records: the rerun's records are all duplicates.
    const reset = (await s.ok(RESET, { id: task.id })).resetCollectorTask;
    expect(reset.progress).toMatchObject({ status: "IDLE", coveredCount: 0, producedCount: 0, coveredRanges: [] });
    await s.ok(START, { id: task.id });
    const again = await waitUntilDone(s, task.id);
    expect(again.progress).toMatchObject({ status: "COMPLETED", producedCount: expected.size });
    stored = await records(task.id);
    expect(stored).toHaveLength(expected.size);
    expect(again.runs.map((r: { status: string }) => r.status)).toEqual(["COMPLETED", "COMPLETED"]);
    // The sink says so: every record of the rerun was one it had.
    expect(again.runs.map((r: { duplicateCount: number }) => r.duplicateCount)).toEqual([expected.size, 0]);

    // startCollectorTask(reset: true) does both in one step.
    await s.ok(START, { id: task.id, reset: true });
    const third = await waitUntilDone(s, task.id);
    expect(third.progress).toMatchObject({ status: "COMPLETED", producedCount: expected.size, filteredCount: expected.size });
    expect(await records(task.id)).toHaveLength(expected.size);
  });

  it("lists tasks, reads one, null for an unknown id", async () => {
    const list = (await s.ok(TASKS)).collectorTasks;
    expect(list.map((t: { name: string }) => t.name)).toContain("db-sink");
    expect((await s.ok(TASK, { id: "999999" })).collectorTask).toBeNull();
  });

  it("/metrics shows each task's counts and status", async () => {
    const text = await (await fetch(s.app.url("/metrics"))).text();
    const produced = freshKeys(u.sim, 10).size;
    expect(text).toContain(`collector_task_records{task="db-sink",kind="produced"} ${produced}`);
    expect(text).toContain('collector_task_records{task="db-sink",kind="covered"} 3000');
    expect(text).toContain('collector_task_status{task="db-sink",status="COMPLETED"} 1');
    expect(text).toContain('collector_task_status{task="db-sink",status="RUNNING"} 0');
  });

  it("updates a task; omitted fields keep their value; a disabled task is not started", async () => {
    const t = await createTask(s, { name: "to-edit", url: u.url });
    expect(t).toMatchObject({ batchSize: 100, filterDays: 7, maxExpiredBatches: 3 });
    const up = (await s.ok(UPDATE, { id: t.id, input: { batchSize: 250, schedule: "0 */5 * * * *", enabled: false } })).updateCollectorTask;
    expect(up).toMatchObject({ name: "to-edit", batchSize: 250, filterDays: 7, schedule: "0 */5 * * * *", enabled: false, sink: "DATABASE" });
    expect(await s.code(START, { id: t.id })).toBe("INVALID_TRANSITION");
    const cleared = (await s.ok(UPDATE, { id: t.id, input: { schedule: "", enabled: true } })).updateCollectorTask;
    expect(cleared).toMatchObject({ schedule: null, enabled: true });
    expect(await s.code(UPDATE, { id: t.id, input: { name: "db-sink" } })).toBe("BAD_USER_INPUT");
  });

  it("bad input is BAD_USER_INPUT and creates nothing; KAFKA is SINK_UNAVAILABLE; roles are enforced", async () => {
    const before = await s.ok(TASKS);
    const bad: Record<string, unknown>[] = [
      { name: "", url: u.url },
      { name: "x", url: "ftp://host/data" },
      { name: "x", url: "not a url" },
      { name: "x", url: u.url, batchSize: 0 },
      { name: "x", url: u.url, batchSize: 1001 },
      { name: "x", url: u.url, filterDays: -1 },
      { name: "x", url: u.url, maxExpiredBatches: -2 },
      { name: "x", url: u.url, schedule: "every minute" },
      { name: "x", url: u.url, stream: "has.dots" },
      { name: "x".repeat(101), url: u.url },
      { name: "db-sink", url: u.url },
    ];
    for (const input of bad) expect(await s.code(CREATE, { input }), JSON.stringify(input)).toBe("BAD_USER_INPUT");
    const kafka = await s.request(CREATE, { input: { name: "k", url: u.url, sink: "KAFKA" } });
    expect(kafka.errors?.[0]?.extensions?.code).toBe("SINK_UNAVAILABLE");
    expect(kafka.errors?.[0]?.message).toMatch(/KAFKA sink is not available/);
    const t = (await s.ok(TASKS)).collectorTasks[0];
    expect(await s.code(UPDATE, { id: t.id, input: { sink: "KAFKA" } })).toBe("SINK_UNAVAILABLE");
    expect(await s.code(CREATE, { input: { name: "v", url: u.url } }, s.tokens.viewer)).toBe("FORBIDDEN");
    expect(await s.code(START, { id: t.id }, s.tokens.spider)).toBe("FORBIDDEN");
    expect(await s.code(STOP, { id: t.id }, null)).toBe("UNAUTHENTICATED");
    for (const m of [START, STOP, RESET]) expect(await s.code(m, { id: "424242" })).toBe("NOT_FOUND");
    expect(await s.code(START, { id: "abc" })).toBe("BAD_USER_INPUT");
    expect(await s.ok(TASKS)).toEqual(before);
  });

  it("stop when idle and reset while running are refused with INVALID_TRANSITION, changing nothing", async () => {
    const slow = await startUpstreamSim({ initial: 2_000, endDay: TODAY, faults: { latencyMs: 30 } });
    try {
      const t = await createTask(s, { name: "slow", url: slow.url, batchSize: 20, maxExpiredBatches: 0 });
      const stop = await s.request(STOP, { id: t.id });
      expect(stop.errors?.[0]).toMatchObject({ extensions: { code: "INVALID_TRANSITION", status: "IDLE" } });
      expect(stop.errors?.[0]?.message).toMatch(/not running/);
      await s.ok(START, { id: t.id });
      expect(await s.code(RESET, { id: t.id })).toBe("INVALID_TRANSITION");
      expect(await s.code(START, { id: t.id, reset: true })).toBe("INVALID_TRANSITION");
      // The refused reset cleared nothing: the run's coverage from the top is still there.
      const running = (await s.ok(TASK, { id: t.id })).collectorTask.progress;
      expect(running.status).toBe("RUNNING");
      expect(running.coveredRanges.at(-1)?.to ?? 2_000).toBe(2_000);
      while ((await s.ok(TASK, { id: t.id })).collectorTask.progress.coveredCount === 0) await new Promise((r) => setTimeout(r, 20));
      slow.sim.setFaults({ latencyMs: 60_000 }); // hold the run in its next fetch: the stop lands mid-run
      const stopped = (await s.ok(STOP, { id: t.id })).stopCollectorTask;
      expect(stopped.progress.status).toBe("STOPPED");
      expect(stopped.progress.coveredCount).toBeGreaterThan(0);
      expect(stopped.progress.coveredCount).toBeLessThan(2_000);
    } finally {
      await slow.close();
    }
  });

  it("an upstream that refuses the request (4xx) ends the run as ERROR at once, without retries", async () => {
    const strict = await startUpstreamSim({ initial: 500, endDay: TODAY, maxLimit: 100 });
    try {
      const t = await createTask(s, { name: "too-big", url: strict.url, batchSize: 200 });
      await s.ok(START, { id: t.id });
      const done = await waitUntilDone(s, t.id);
      expect(done.progress.status).toBe("ERROR");
      expect(done.progress.lastError).toMatch(/^batch 300-499: upstream answered HTTP 400 \(offset=300 limit=200\): .* \(not retried\)$/);
    } finally {
      await strict.close();
    }
  });

  it("a RUNNING task whose server died (no heartbeat) reads as STOPPED and can be started again", async () => {
    const t = await createTask(s, { name: "orphan", url: u.url, filterDays: 10 });
    const id = Number(t.id);
    const long = new Date(s.app.services.calendar.now().getTime() - s.app.services.collector.store.staleRunMs - 1000);
    // As a killed server leaves it: RUNNING, a run open, the heartbeat old.
    await s.app.services.database.transaction(async (tx) => {
      const status = provider === "postgres" ? Prisma.sql`'RUNNING'::"CollectorStatus"` : Prisma.sql`'RUNNING'`;
      const [run] = await tx.query<{ id: number }>(Prisma.sql`INSERT INTO "CollectorRun" ("taskId", "status", "trigger", "startedAt")
        VALUES (${id}, ${status}, 'manual', ${long}) RETURNING "id"`);
      await tx.execute(Prisma.sql`UPDATE "CollectorTask" SET "status" = ${status}, "heartbeatAt" = ${long}, "runId" = ${run!.id},
        "coveredRanges" = '[[2500,3000]]' WHERE "id" = ${id}`);
    });
    expect((await s.ok(TASK, { id: t.id })).collectorTask.progress.status).toBe("STOPPED");
    const fetchedAt = (offset: number) => u.sim.requestsAt.get(offset) ?? 0;
    const [top, below] = [fetchedAt(2_900), fetchedAt(2_400)];
    expect(await s.code(STOP, { id: t.id })).toBe("INVALID_TRANSITION");
    await s.ok(START, { id: t.id });
    const done = await waitUntilDone(s, t.id);
    expect(done.progress.status).toBe("COMPLETED");
    expect(done.runs.map((r: { status: string; error: string }) => [r.status, r.error])).toEqual([
      ["COMPLETED", ""],
      ["STOPPED", "interrupted: its server stopped without finishing it"],
    ]);
    // The interrupted run's coverage was kept: the new run began below it.
    expect(fetchedAt(2_900)).toBe(top);
    expect(fetchedAt(2_400)).toBe(below + 1);
    expect(done.progress.coveredRanges).toEqual([{ from: 0, to: 3_000 }]);
  });
});

describe.each(await testProviders())("collector tasks file, autostart, schedules and an unreachable broker on %s", (provider) => {
  let s: TestServer;
  let u: RunningUpstreamSim;
  const dir = mkdtempSync(join(tmpdir(), "ccp-collector-"));
  const file = join(dir, "tasks.json");

  beforeAll(async () => {
    u = await startUpstreamSim({ initial: 500, endDay: TODAY, spanDays: 5 });
    writeFileSync(
      file,
      JSON.stringify({
        tasks: [
          { name: "auto", url: u.url, autoStart: true, filterDays: 30 },
          { name: "cron", url: u.url, schedule: "* * * * * *", filterDays: 30 },
          { name: "off", url: u.url, autoStart: true, enabled: false },
          { name: "nats-down", url: u.url, sink: "NATS" },
        ],
      }),
    );
    s = await startServer(provider, { scheduler: true, config: { COLLECTOR_TASKS_FILE: file, NATS_URL: "nats://127.0.0.1:1" } });
  });
  afterAll(async () => {
    await s?.close();
    await u?.close();
  });

  const byName = async (name: string) => {
    const id = (await s.ok(TASKS)).collectorTasks.find((t: { name: string }) => t.name === name)?.id;
    return (await s.ok(TASK, { id })).collectorTask;
  };

  it("creates the file's tasks, starts the autoStart ones, runs scheduled ones on their cron", async () => {
    expect((await s.ok(TASKS)).collectorTasks.map((t: { name: string }) => t.name)).toEqual(["auto", "cron", "off", "nats-down"]);
    const auto = await waitUntilDone(s, (await byName("auto")).id);
    expect(auto.progress).toMatchObject({ status: "COMPLETED", producedCount: 500, coveredCount: 500 });
    expect(auto.runs.map((r: { trigger: string }) => r.trigger)).toEqual(["autostart"]);

    const cron = await byName("cron");
    expect(cron.schedule).toBe("* * * * * *");
    expect((await s.ok(`query($id: ID!) { collectorTask(id: $id) { nextRunAt } }`, { id: cron.id })).collectorTask.nextRunAt).not.toBeNull();
    for (let end = Date.now() + 10_000; ; ) {
      const t = (await s.ok(TASK, { id: cron.id })).collectorTask;
      if (t.runs.some((r: { trigger: string; status: string }) => r.trigger === "schedule" && r.status === "COMPLETED")) break;
      if (Date.now() > end) throw new Error(`no scheduled run: ${JSON.stringify(t.runs)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A disabled task neither autostarts nor runs.
    const off = await byName("off");
    expect(off.progress.status).toBe("IDLE");
    expect(off.runs).toEqual([]);
  });

  it("seeding again creates nothing; a file with a KAFKA task is refused, naming the variable", async () => {
    expect(await s.app.services.collector.seedFromFile(file)).toBe(0);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify([{ name: "kafka", url: u.url, sink: "KAFKA" }]));
    await expect(s.app.services.collector.seedFromFile(bad)).rejects.toThrow(/COLLECTOR_TASKS_FILE=.*KAFKA sink is not available/);
    writeFileSync(bad, JSON.stringify([{ name: "no-url" }]));
    await expect(s.app.services.collector.seedFromFile(bad)).rejects.toThrow(/COLLECTOR_TASKS_FILE=.*url/);
  });

  it("starting a NATS task while NATS is unreachable is SINK_UNAVAILABLE and starts nothing", async () => {
    const t = await byName("nats-down");
    const r = await s.request(START, { id: t.id });
    expect(r.errors?.[0]?.extensions?.code).toBe("SINK_UNAVAILABLE");
    expect(r.errors?.[0]?.message).toMatch(/NATS is not reachable at nats:\/\/127\.0\.0\.1:1/);
    const after = await byName("nats-down");
    expect(after.progress.status).toBe("IDLE");
    expect(after.runs).toEqual([]);
    const lag = (await s.ok(`query($id: ID!) { collectorTask(id: $id) { progress { lag { head behindHead sinkPending error } } } }`, { id: t.id }))
      .collectorTask.progress.lag;
    expect(lag).toMatchObject({ head: 500, behindHead: 500, sinkPending: null });
    expect(lag.error).toMatch(/NATS is not reachable/);
  });
});

describe.each(await testProviders())("collector over a flaky upstream on %s", (provider) => {
  let s: TestServer;
  let u: RunningUpstreamSim;
  beforeAll(async () => {
    // Enough retries that a 30% error rate cannot exhaust them (0.3^11 per request).
    s = await startServer(provider, { config: { COLLECTOR_MAX_RETRIES: 10, COLLECTOR_RETRY_MIN_MS: 1, COLLECTOR_RETRY_MAX_MS: 5 } });
    u = await startUpstreamSim({ initial: 3_000, endDay: TODAY, spanDays: 30, seed: 11, faults: { errorRate: 0.3 } });
  });
  afterAll(async () => {
    await s?.close();
    await u?.close();
  });

  it("retries the failed requests with backoff and still stores every fresh record once", async () => {
    const t = await createTask(s, { name: "flaky", url: u.url, batchSize: 100, filterDays: 15, maxExpiredBatches: 0 });
    await s.ok(START, { id: t.id });
    const done = await waitUntilDone(s, t.id);
    const expected = freshKeys(u.sim, 15);
    expect(done.progress).toMatchObject({ status: "COMPLETED", lastError: "", producedCount: expected.size, coveredCount: 3_000 });
    expect(done.progress.run).toMatchObject({ batches: 30, fetchedCount: 3_000 });
    expect(u.sim.requests).toBeGreaterThan(31); // some answers were 503s, retried
    const rows = await s.app.services.database.reader.collectorRecord.findMany({ where: { taskId: Number(t.id) }, select: { key: true } });
    expect(new Set(rows.map((r) => r.key))).toEqual(expected);
  });
});
