// The stalls section of npm run bench: how long the event loop stops under a sustained SQLite write
// load, with the WAL checkpointed on a thread of its own (SQLITE_CHECKPOINTS=thread, the default)
// and, as the baseline, by the commit that fills it (SQLITE_CHECKPOINTS=commit, SQLite's own way).
// The load: page reports through the crawl store in-process at C=32 for a fixed time, on a server
// built by buildApp. Measured: reports/s, each call's latency (p50 / p99 / p99.9 / max) and the
// event loop's delay (p99 / max, perf_hooks.monitorEventLoopDelay): a stall there stops every
// request the process serves, HTTP and WebSocket alike.
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { pino } from "pino";
import { buildApp } from "../server/src/app.ts";
import type { Claim } from "../server/src/crawl/store.ts";
import { crossProduct, importKeywords } from "../server/src/keywords/import.ts";
import { createTestDatabase } from "../server/test/databases.ts";
import { pct } from "./scale.ts";

export type CheckpointMode = "thread" | "commit";

export interface StallRow {
  checkpoints: CheckpointMode;
  seconds: number;
  reports: number;
  perSecond: number;
  /** Call latency, ms. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** Event-loop delay, ms. */
  loopP99: number;
  loopMax: number;
  /** Checkpoints the thread ran (and of them RESTARTs); none with commit checkpoints. */
  threadCheckpoints: number;
  restarts: number;
}

const CONCURRENCY = 32;
const MAX_PAGES = 50;


/** Page reports for `seconds` with the given checkpoint mode, on a fresh database of `keywords` leased keywords. */
export async function runStalls(mode: CheckpointMode, seconds: number, keywords: number): Promise<StallRow> {
  const db = await createTestDatabase("sqlite");
  const app = await buildApp({
    config: { DATABASE_URL: db.url, LOG_LEVEL: "silent", SQLITE_CHECKPOINTS: mode },
    logger: pino({ level: "silent" }),
    scheduler: false,
  });
  try {
    await importKeywords(app.services.database, "qcwy", crossProduct(Array.from({ length: keywords }, (_, i) => `city${i}`), ["bench"]));
    const store = app.services.store;
    const leases: Claim[] = [];
    while (leases.length < keywords) {
      const got = await store.claim("qcwy", "stalls", Math.min(100, keywords - leases.length));
      if (!got.length) break;
      leases.push(...got);
    }
    const loop = monitorEventLoopDelay({ resolution: 5 });
    const latencies: number[] = [];
    loop.enable();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        // Worker w reports leases w, w + 32, …, page by page; stops at the time limit or the last page.
        for (let i = w; performance.now() < end; i += CONCURRENCY) {
          const page = Math.floor(i / leases.length) + 1;
          if (page > MAX_PAGES) return;
          const l = leases[i % leases.length]!;
          const t = performance.now();
          await store.reportPageProgress({ keywordId: l.keyword.id, leaseToken: l.leaseToken, page, totalPages: MAX_PAGES, jobsFound: 10 });
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    loop.disable();
    latencies.sort((a, b) => a - b);
    const cp = app.services.database.checkpoints?.();
    return {
      checkpoints: mode,
      seconds: elapsed,
      reports: latencies.length,
      perSecond: latencies.length / elapsed,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      p999: pct(latencies, 99.9),
      max: latencies.at(-1)!,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      threadCheckpoints: cp?.runs ?? 0,
      restarts: cp?.restarts ?? 0,
    };
  } finally {
    await app.stop();
    await db.drop();
  }
}

export function stallsTable(rows: StallRow[]): string {
  const ms = (x: number) => x.toFixed(1);
  return [
    "stalls (SQLite, page reports in-process, C=32): where the WAL is checkpointed",
    "",
    "| checkpoints | seconds | reports/s | call p50 ms | p99 | p99.9 | max | event-loop delay p99 ms | max | thread checkpoints (restarts) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.checkpoints} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.p999)} | ${ms(r.max)} | ${ms(r.loopP99)} | ${ms(r.loopMax)} | ${r.threadCheckpoints} (${r.restarts}) |`,
    ),
  ].join("\n");
}
