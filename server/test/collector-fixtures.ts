// Shared by the collector integration tests: GraphQL documents, a task factory, waiting for a run
// to end, and the fresh records a run must publish, computed from the simulator's ground truth.
import type { UpstreamSim } from "../../spiders/sim/upstream/server.ts";
import type { TestServer } from "./harness.ts";

/** The harness clock's crawl day (2026-11-29T02:00Z in Asia/Shanghai). */
export const TODAY = "2026-11-29";

export const RUN_FIELDS = "id status trigger total batches fetchedCount filteredCount producedCount duplicateCount expiredBatches staleBelow error";
export const PROGRESS_FIELDS = `taskId status total coveredCount coveredRanges { from to } filteredCount producedCount lastError lastUpdate run { ${RUN_FIELDS} }`;
export const TASK_FIELDS = `id name url sink stream subject batchSize filterDays maxExpiredBatches schedule enabled autoStart
  progress { ${PROGRESS_FIELDS} } runs(last: 20) { ${RUN_FIELDS} }`;

export const CREATE = `mutation($input: CreateCollectorTaskInput!) { createCollectorTask(input: $input) { ${TASK_FIELDS} } }`;
export const START = `mutation($id: ID!, $reset: Boolean) { startCollectorTask(id: $id, reset: $reset) { ${TASK_FIELDS} } }`;
export const STOP = `mutation($id: ID!) { stopCollectorTask(id: $id) { ${TASK_FIELDS} } }`;
export const RESET = `mutation($id: ID!) { resetCollectorTask(id: $id) { ${TASK_FIELDS} } }`;
export const TASK = `query($id: ID!) { collectorTask(id: $id) { ${TASK_FIELDS} } }`;
export const LAG = `query($id: ID!) { collectorTask(id: $id) { progress { lag { head behindHead sinkMessages sinkPending consumers { name pending ackPending } error } } } }`;

export async function createTask(s: TestServer, input: Record<string, unknown>) {
  return (await s.ok(CREATE, { input })).createCollectorTask;
}

/** Polls until the task's status is not RUNNING; returns the task. */
export async function waitUntilDone(s: TestServer, id: string, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const task = (await s.ok(TASK, { id })).collectorTask;
    if (task.progress.status !== "RUNNING") return task;
    if (Date.now() > end) throw new Error(`task ${id} still RUNNING after ${ms} ms: ${JSON.stringify(task.progress)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Keys of the records in [from, to) whose freshness day is within filterDays of `today`. */
export function freshKeys(sim: UpstreamSim, filterDays: number, from = 0, to = sim.total, today = TODAY): Set<string> {
  const cutoff = new Date(Date.parse(`${today}T00:00:00Z`) - filterDays * 86_400_000).toISOString().slice(0, 10);
  const keys = new Set<string>();
  for (let i = from; i < to; i++) if (sim.dataset.freshnessDay(i) >= cutoff) keys.add(sim.dataset.record(i).id);
  return keys;
}

/** Index of the batch an offset falls in when a run walks down from `top` (0 = the newest batch). */
export const batchIndex = (offset: number, top: number, batchSize: number) => Math.floor((top - 1 - offset) / batchSize);
