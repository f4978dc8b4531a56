// croner runs the background jobs. A run never overlaps the previous one of the same job, and an
// error is logged and left for the next tick rather than crashing the server. With several server
// instances on one database, each tick runs on one of them only (tick-lease.ts).
import { Cron } from "croner";
import type { Logger } from "pino";
import type { CrawlStore } from "../crawl/store.ts";
import type { Database } from "../db/client.ts";
import { dayRollover } from "./day-rollover.ts";
import { staleSweep } from "./stale-sweep.ts";
import { claimTick, instanceId } from "./tick-lease.ts";

export interface SchedulerOptions {
  staleSweepCron: string;
  timeZone: string;
  /** The history prune (history-prune.ts) and its schedule. */
  historyPruneCron: string;
  pruneHistory: () => Promise<unknown>;
  /** Told of every tick: the outcome, and the keywords changed when it ran here. */
  onRun?: (job: string, outcome: "ok" | "error" | "skipped", changed?: number) => void;
}

export class Scheduler {
  private jobs: Cron[] = [];
  /** Runs in progress, so stop() can wait for them before the database closes. */
  private running = new Set<Promise<unknown>>();
  constructor(
    private readonly store: CrawlStore,
    private readonly database: Database,
    private readonly log: Logger,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    const run = (name: string, fn: () => Promise<unknown>) => async (self: Cron) => {
      // The schedule's time of this tick: the same on every instance, whenever each one wakes.
      // (croner fires at or after it; previousRuns excludes a run equal to the reference: + 1 ms.)
      const tick = self.previousRuns(1, new Date(Date.now() + 1))[0] ?? new Date();
      const p = (async () => {
        if (!(await claimTick(this.database, name, tick))) {
          this.log.debug({ job: name, tick, instance: instanceId }, "tick taken by another instance");
          this.options.onRun?.(name, "skipped");
          return;
        }
        this.log.debug({ job: name, tick, instance: instanceId }, "tick won");
        const changed = await fn();
        this.options.onRun?.(name, "ok", typeof changed === "number" ? changed : undefined);
      })().catch((err) => {
        this.options.onRun?.(name, "error");
        this.log.error({ err, job: name }, "scheduled job failed; retrying at the next tick");
      });
      this.running.add(p);
      try {
        await p;
      } finally {
        this.running.delete(p);
      }
    };
    this.jobs.push(
      new Cron(this.options.staleSweepCron, { name: "stale-sweep", protect: true, timezone: this.options.timeZone },
        run("stale-sweep", () => staleSweep(this.store, this.log))),
      new Cron("0 0 0 * * *", { name: "day-rollover", protect: true, timezone: this.options.timeZone },
        run("day-rollover", () => dayRollover(this.store, this.log))),
      new Cron(this.options.historyPruneCron, { name: "history-prune", protect: true, timezone: this.options.timeZone },
        // Rows, not keywords: reported by the prune itself (crawl_history_pruned_rows_total).
        run("history-prune", async () => void (await this.options.pruneHistory()))),
    );
  }

  /** No new runs; resolves when the runs in progress have finished. */
  async stop(): Promise<void> {
    for (const j of this.jobs) j.stop();
    this.jobs = [];
    await Promise.all(this.running);
  }
}
