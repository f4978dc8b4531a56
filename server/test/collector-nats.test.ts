// The incremental collector end to end: the upstream simulator over HTTP → the collector in the real
// server (started and stopped over GraphQL) → a real NATS JetStream stream, read back message by
// message. Each test uses its own stream and deletes it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startUpstreamSim, type RunningUpstreamSim } from "../../spiders/sim/upstream/server.ts";
import { testProviders } from "./databases.ts";
import { startServer, type TestServer } from "./harness.ts";
import { collect } from "./subscribe.ts";
import { natsAvailable, NATS_URL, testBroker, type TestBroker } from "./nats.ts";
import { batchIndex, createTask, freshKeys, LAG, PROGRESS_FIELDS, START, STOP, TODAY, waitUntilDone } from "./collector-fixtures.ts";

const runNats = await natsAvailable();
const FILTER_DAYS = 30;
const BATCH = 100;
const MAX_EXPIRED = 3;

describe.skipIf(!runNats).each(await testProviders())("collector → NATS JetStream on %s", (provider) => {
  let s: TestServer;
  let broker: TestBroker;
  const sims: RunningUpstreamSim[] = [];

  beforeAll(async () => {
    // Short retry waits so a failing batch gives up quickly; the number of tries is what counts.
    s = await startServer(provider, {
      config: { NATS_URL, COLLECTOR_MAX_RETRIES: 3, COLLECTOR_RETRY_MIN_MS: 10, COLLECTOR_RETRY_MAX_MS: 50 },
    });
    broker = await testBroker();
  });
  afterAll(async () => {
    await s?.close();
    await broker?.close();
  });
  afterEach(async () => {
    await Promise.all(sims.splice(0).map((x) => x.close()));
  });

  async function upstream(o: Parameters<typeof startUpstreamSim>[0] = {}) {
    const u = await startUpstreamSim({ initial: 10_000, endDay: TODAY, spanDays: 180, seed: Math.floor(Math.random() * 1e9), ...o });
    sims.push(u);
    return u;
  }

  async function natsTask(url: string, extra: Record<string, unknown> = {}) {
    const stream = broker.streamName();
    const task = await createTask(s, {
      name: stream,
      url,
      sink: "NATS",
      stream,
      batchSize: BATCH,
      filterDays: FILTER_DAYS,
      maxExpiredBatches: MAX_EXPIRED,
      ...extra,
    });
    return { id: task.id as string, stream };
  }

  it("first run over 10,000 records: newest first, exactly the fresh ones, batch by batch; ends after maxExpiredBatches stale batches; then an append of 500 publishes only those", async () => {
    const u = await upstream();
    const { id, stream } = await natsTask(u.url);
    const expected = freshKeys(u.sim, FILTER_DAYS);
    expect(expected.size).toBeGreaterThan(1000); // the data spreads 180 days; a month of it is fresh
    expect(expected.size).toBeLessThan(10_000);

    await s.ok(START, { id });
    const task = await waitUntilDone(s, id);
    expect(task.progress).toMatchObject({ status: "COMPLETED", lastError: "", total: 10_000, coveredCount: 10_000 });
    expect(task.progress.coveredRanges).toEqual([{ from: 0, to: 10_000 }]);

    const msgs = await broker.messages(stream);
    expect(msgs.length).toBe(expected.size);
    expect(new Set(msgs.map((m) => m.key))).toEqual(expected);
    // Stored batch by batch from the newest: batch indexes never go back; inside a batch, offsets ascend.
    for (let i = 1; i < msgs.length; i++) {
      const [a, b] = [batchIndex(msgs[i - 1]!.offset, 10_000, BATCH), batchIndex(msgs[i]!.offset, 10_000, BATCH)];
      expect(b).toBeGreaterThanOrEqual(a);
      if (a === b) expect(msgs[i]!.offset).toBeGreaterThan(msgs[i - 1]!.offset);
    }
    // The run went down to the oldest fresh record's batch, then exactly MAX_EXPIRED stale batches.
    const lastFreshBatch = Math.max(...msgs.map((m) => batchIndex(m.offset, 10_000, BATCH)));
    const run = task.progress.run;
    expect(run).toMatchObject({ status: "COMPLETED", trigger: "manual", expiredBatches: MAX_EXPIRED, batches: lastFreshBatch + 1 + MAX_EXPIRED });
    expect(run.staleBelow).toBe(10_000 - run.batches * BATCH);
    expect(run.fetchedCount).toBe(run.batches * BATCH);
    // Each batch fetched once; offset 0 was asked only for the total (it lies in the stale part).
    expect(u.sim.requestsAt.size).toBe(run.batches + 1);
    expect([...u.sim.requestsAt.values()].every((n) => n === 1)).toBe(true);
    expect(run).toMatchObject({ filteredCount: expected.size, producedCount: expected.size, duplicateCount: 0 });
    expect(task.progress).toMatchObject({ filteredCount: expected.size, producedCount: expected.size });

    // Incremental: 500 records appended (published today) → the next run takes exactly those.
    u.sim.append(500, TODAY);
    const lag = (await s.ok(LAG, { id })).collectorTask.progress.lag;
    expect(lag).toMatchObject({ head: 10_500, behindHead: 500, sinkMessages: expected.size, sinkPending: null, error: null });
    await s.ok(START, { id });
    const second = await waitUntilDone(s, id);
    expect(second.progress.run).toMatchObject({ status: "COMPLETED", total: 10_500, batches: 5, fetchedCount: 500, producedCount: 500 });
    const after = await broker.messages(stream);
    expect(after.length).toBe(expected.size + 500);
    const appended = after.slice(expected.size);
    expect(appended.map((m) => m.key).sort()).toEqual(Array.from({ length: 500 }, (_, i) => u.sim.dataset.record(10_000 + i).id).sort());
    expect(second.progress).toMatchObject({ producedCount: expected.size + 500, coveredCount: 10_500 });
    expect(second.progress.coveredRanges).toEqual([{ from: 0, to: 10_500 }]);
  });

  it("stopped at a random batch and started again: every fresh record once, no gap, no duplicate in the stream", async () => {
    // A little latency per request so the stop lands while the run goes.
    const u = await upstream({ faults: { latencyMs: 5 } });
    const { id, stream } = await natsTask(u.url);
    const expected = freshKeys(u.sim, FILTER_DAYS);
    const freshBatches = Math.ceil(expected.size / BATCH);
    const stopAt = 2 + Math.floor(Math.random() * Math.max(1, freshBatches - 4));

    const sub = collect(s.ws(), `subscription($id: ID!) { collectorProgress(taskId: $id) { status run { batches } } }`, { id });
    await sub.until(() => sub.messages.length >= 1);
    // The upstream holds the request for the batch after the stopAt-th: the stop lands mid-run, on
    // a fetch in flight, with exactly stopAt batches done.
    u.sim.onRequest = (offset) => {
      if (offset === 10_000 - (stopAt + 1) * BATCH) u.sim.setFaults({ latencyMs: 60_000 });
    };
    await s.ok(START, { id });
    await sub.until(() => (sub.messages.at(-1)?.collectorProgress.run?.batches ?? 0) >= stopAt, 30_000);
    const stopped = (await s.ok(STOP, { id })).stopCollectorTask;
    u.sim.onRequest = undefined;
    u.sim.setFaults({ latencyMs: 5 });
    sub.stop();
    expect(stopped.progress.status).toBe("STOPPED");
    const first = stopped.progress.run;
    expect(first).toMatchObject({ status: "STOPPED", batches: stopAt });
    // The run covered the top of the upstream only: a gap below it remains.
    const ranges = stopped.progress.coveredRanges;
    expect(ranges).toEqual([{ from: 10_000 - first.batches * BATCH, to: 10_000 }]);
    expect((await broker.messages(stream)).length).toBe(first.producedCount);

    await s.ok(START, { id });
    const done = await waitUntilDone(s, id);
    expect(done.progress.status).toBe("COMPLETED");
    expect(done.progress.coveredRanges).toEqual([{ from: 0, to: 10_000 }]);
    const second = done.progress.run;
    // The second run started where the first stopped: nothing above that was fetched again.
    expect(second.staleBelow).not.toBeNull(); // still the first descent: the expiry rule ended it
    expect(second.fetchedCount).toBe(ranges[0].from - second.staleBelow);
    const msgs = await broker.messages(stream);
    expect(new Set(msgs.map((m) => m.key))).toEqual(expected);
    expect(msgs.length).toBe(expected.size); // no duplicate downstream
    expect(first.producedCount + second.producedCount).toBe(expected.size); // none published twice either
    expect([first.duplicateCount, second.duplicateCount]).toEqual([0, 0]);
    expect(done.progress.producedCount).toBe(expected.size);
  });

  it("a batch that always fails ends the run as ERROR with the message after a bounded number of tries; the next run resumes there", async () => {
    const u = await upstream({ faults: { failRange: [9_550, 9_560] } });
    const { id, stream } = await natsTask(u.url);
    await s.ok(START, { id });
    const failed = await waitUntilDone(s, id);
    expect(failed.progress.status).toBe("ERROR");
    expect(failed.progress.lastError).toContain("batch 9500-9599");
    expect(failed.progress.lastError).toContain("HTTP 500");
    expect(failed.progress.lastError).toContain("permanent failure for offsets 9550-9559");
    expect(failed.progress.lastError).toContain("gave up after 4 tries");
    expect(failed.progress.run).toMatchObject({ status: "ERROR", batches: 4, error: failed.progress.lastError });
    expect(u.sim.requestsAt.get(9_500)).toBe(4); // COLLECTOR_MAX_RETRIES = 3: 1 try + 3 retries, then it gives up
    expect(failed.progress.coveredRanges).toEqual([{ from: 9_600, to: 10_000 }]);
    expect(new Set((await broker.messages(stream)).map((m) => m.key))).toEqual(freshKeys(u.sim, FILTER_DAYS, 9_600));

    u.sim.setFaults({ failRange: null });
    await s.ok(START, { id });
    const done = await waitUntilDone(s, id);
    expect(done.progress).toMatchObject({ status: "COMPLETED", lastError: "" });
    const msgs = await broker.messages(stream);
    expect(new Set(msgs.map((m) => m.key))).toEqual(freshKeys(u.sim, FILTER_DAYS));
    expect(msgs.length).toBe(freshKeys(u.sim, FILTER_DAYS).size);
  });

  it("lag: JetStream consumer pending and the distance behind the upstream head", async () => {
    const u = await upstream({ initial: 1_000, spanDays: 10 });
    const { id, stream } = await natsTask(u.url);
    await s.ok(START, { id });
    await waitUntilDone(s, id);
    const all = (await broker.messages(stream)).length;
    expect(all).toBe(freshKeys(u.sim, FILTER_DAYS).size);
    await broker.jsm.consumers.add(stream, { durable_name: "reader", ack_policy: "explicit" as never });
    let lag = (await s.ok(LAG, { id })).collectorTask.progress.lag;
    expect(lag).toMatchObject({ head: 1_000, behindHead: 0, sinkMessages: all, sinkPending: all, consumers: [{ name: "reader", pending: all, ackPending: 0 }] });

    const consumer = await (await import("@nats-io/jetstream")).jetstream(broker.nc).consumers.get(stream, "reader");
    const batch = await consumer.fetch({ max_messages: 10, expires: 2_000 });
    for await (const m of batch) await m.ackAck();
    lag = (await s.ok(LAG, { id })).collectorTask.progress.lag;
    expect(lag).toMatchObject({ sinkPending: all - 10, consumers: [{ name: "reader", pending: all - 10, ackPending: 0 }] });

    u.sim.append(42, TODAY);
    lag = (await s.ok(LAG, { id })).collectorTask.progress.lag;
    expect(lag).toMatchObject({ head: 1_042, behindHead: 42 });
  });

  it("the progress subscription delivers updates while a run goes, ending on the final counts", async () => {
    const u = await upstream({ initial: 2_000, spanDays: 20, faults: { latencyMs: 20 } });
    const { id } = await natsTask(u.url, { maxExpiredBatches: 0 });
    const sub = collect(s.ws(), `subscription($id: ID!) { collectorProgress(taskId: $id) { ${PROGRESS_FIELDS} } }`, { id });
    await sub.until(() => sub.messages.length >= 1);
    expect(sub.messages[0].collectorProgress).toMatchObject({ taskId: id, status: "IDLE", coveredCount: 0 });
    await s.ok(START, { id });
    await sub.until(() => sub.messages.at(-1)?.collectorProgress.status === "COMPLETED", 30_000);
    sub.stop();
    const updates = sub.messages.map((m) => m.collectorProgress);
    const running = updates.filter((p) => p.status === "RUNNING");
    // An update per batch (20 batches); each reads the task as it is when sent, so a slow reader may
    // merge a few, but many arrive while RUNNING, with coverage growing.
    expect(running.length).toBeGreaterThanOrEqual(10);
    const covered = running.map((p) => p.coveredCount);
    expect(covered).toEqual([...covered].sort((a, b) => a - b));
    expect(new Set(covered).size).toBeGreaterThanOrEqual(5);
    const last = updates.at(-1);
    expect(last).toMatchObject({ status: "COMPLETED", coveredCount: 2_000, producedCount: freshKeys(u.sim, FILTER_DAYS).size });
    expect(sub.errors).toEqual([]);
  });

  it("start twice (racing) → one run, the other refused; stop when idle → refused", async () => {
    // The upstream holds every request: the run stays in its first fetch until stopped.
    const u = await upstream({ faults: { latencyMs: 60_000 } });
    const { id } = await natsTask(u.url);
    expect(await s.code(STOP, { id })).toBe("INVALID_TRANSITION");
    const results = await Promise.all([s.request(START, { id }), s.request(START, { id })]);
    const codes = results.map((r) => r.errors?.[0]?.extensions?.code ?? "ok").sort();
    expect(codes).toEqual(["INVALID_TRANSITION", "ok"]);
    const refused = results.find((r) => r.errors)!;
    expect(refused.errors![0]!.message).toMatch(/already running/);
    expect(await s.code(START, { id })).toBe("INVALID_TRANSITION");
    const stopped = (await s.ok(STOP, { id })).stopCollectorTask;
    expect(stopped.progress.status).toBe("STOPPED");
    expect(stopped.runs.length).toBe(1);
    expect(await s.code(STOP, { id })).toBe("INVALID_TRANSITION");
  });
});
