// One run of a task: newest first, from the top of the upstream's current total down through every
// offset range not yet covered. Each batch is fetched, filtered by freshness and published to the
// sink before the next one, then committed (coverage + counts) in one transaction. On a first run
// (coverage has not reached offset 0), maxExpiredBatches consecutive batches without a fresh
// record end it and declare everything below stale. A request that keeps failing ends the run as
// ERROR after a bounded number of tries with backoff; a stop ends it as STOPPED at a batch boundary.
import pRetry from "p-retry";
import type { Logger } from "pino";
import type { CollectorTask } from "../../../generated/sqlite/client.ts";
import { CollectorStatus } from "../../../generated/sqlite/enums.ts";
import type { CrawlCalendar } from "../crawl/crawl-day.ts";
import { nextBatch, parseRanges, reachesBottom } from "./coverage.ts";
import { cutoffDay, isFresh } from "./freshness.ts";
import type { Sink } from "./sinks/sink.ts";
import type { CollectorStore } from "./store.ts";
import { type Upstream, UpstreamError } from "./upstream/upstream.ts";

export interface RetryPolicy {
  /** Retries after the first try. */
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
}

export interface RunDeps {
  store: CollectorStore;
  calendar: CrawlCalendar;
  upstream: Upstream;
  sink: Sink;
  retry: RetryPolicy;
  log: Logger;
  /** Called after every committed change (progress subscribers). */
  changed: () => void;
}

export interface RunOutcome {
  status: CollectorStatus;
  error: string;
}

export async function runTask(task: CollectorTask, runId: number, signal: AbortSignal, d: RunDeps): Promise<RunOutcome> {
  const log = d.log.child({ taskId: task.id, runId });
  const heartbeat = setInterval(() => void d.store.heartbeat(task.id, runId).catch((err) => log.warn({ err }, "heartbeat failed")), d.store.heartbeatMs);
  heartbeat.unref();

  /**
   * Bounded tries with exponential backoff. A stop interrupts an interruptible one (a fetch and its
   * waits); a publish is not interrupted, so a batch the sink has is always committed.
   */
  const retried = <T>(what: string, fn: () => Promise<T>, interruptible = true) => {
    let tries = 0;
    return pRetry(() => (tries++, fn()), {
      retries: d.retry.retries,
      minTimeout: d.retry.minTimeoutMs,
      maxTimeout: d.retry.maxTimeoutMs,
      factor: 2,
      signal: interruptible ? signal : undefined,
      shouldRetry: ({ error }) => !(error instanceof UpstreamError && !error.retryable),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        log.warn({ what, attempt: attemptNumber, retriesLeft, err: error.message }, "collector request failed");
      },
    }).catch((e: Error) => {
      if (interruptible && signal.aborted) throw e;
      throw new Error(`${what}: ${e.message} (${tries === 1 ? "not retried" : `gave up after ${tries} tries`})`, { cause: e });
    });
  };

  let outcome: RunOutcome = { status: CollectorStatus.COMPLETED, error: "" };
  try {
    const total = await retried("upstream total", () => d.upstream.total(signal));
    await d.store.setRunTotal(task.id, runId, total);
    d.changed();
    let ranges = parseRanges(task.coveredRanges);
    const firstRun = !reachesBottom(ranges);
    let expired = 0;
    let stopped = false;
    log.info({ total, firstRun, covered: ranges }, "collector run started");

    for (let batch = nextBatch(ranges, total, task.batchSize); batch; batch = nextBatch(ranges, total, task.batchSize)) {
      if (signal.aborted) {
        stopped = true;
        break;
      }
      const [from, to] = batch;
      const where = `batch ${from}-${to - 1}`;
      const page = await retried(where, () => d.upstream.fetch(from, to - from, signal));
      // Per batch: a long run may cross midnight in CRAWL_TZ.
      const cutoff = cutoffDay(d.calendar.today(), task.filterDays);
      const fresh = page.records.filter((r) => isFresh(r.day, cutoff));
      const published = fresh.length
        ? await retried(`${where}: publish to ${d.sink.target}`, () => d.sink.publish(fresh), false)
        : { added: 0, duplicates: 0 };
      expired = fresh.length ? 0 : expired + 1;
      const expiredOut = firstRun && task.maxExpiredBatches > 0 && expired >= task.maxExpiredBatches;
      const committed = await d.store.commitBatch(task.id, runId, {
        from,
        to,
        total: Math.max(total, page.total),
        fetched: page.records.length,
        filtered: fresh.length,
        produced: fresh.length,
        duplicates: published.duplicates,
        expiredBatches: expired,
        staleBelow: expiredOut ? from : null,
      });
      if (!committed) throw new Error("the task was taken over by another run");
      ranges = committed.ranges;
      d.changed();
      if (expiredOut) {
        log.info({ below: from, batches: expired }, "first run: consecutive batches without fresh records; older offsets declared stale");
        break;
      }
      if (committed.stopRequested) {
        stopped = true;
        break;
      }
    }
    if (stopped) outcome = { status: CollectorStatus.STOPPED, error: "" };
  } catch (e) {
    outcome = signal.aborted ? { status: CollectorStatus.STOPPED, error: "" } : { status: CollectorStatus.ERROR, error: (e as Error).message };
  } finally {
    clearInterval(heartbeat);
  }
  await d.store.finishRun(task.id, runId, outcome.status, outcome.error);
  d.changed();
  log[outcome.status === CollectorStatus.ERROR ? "error" : "info"]({ status: outcome.status, error: outcome.error || undefined }, "collector run ended");
  return outcome;
}
