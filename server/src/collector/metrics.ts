// The collector's Prometheus gauges, read from the task rows at scrape time (so every instance
// reports the same, whichever one runs the task).
import { Gauge, type Registry } from "prom-client";
import { CollectorStatus } from "../../../generated/sqlite/enums.ts";
import { coveredCount, parseRanges } from "./coverage.ts";
import type { CollectorService } from "./service.ts";

export function registerCollectorMetrics(registry: Registry, collector: CollectorService): void {
  new Gauge({
    name: "collector_task_records",
    help: "Per collector task since its last reset: upstream total seen, offsets covered, fresh records found, records published.",
    labelNames: ["task", "kind"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const t of await collector.tasks()) {
        this.set({ task: t.name, kind: "total" }, t.total);
        this.set({ task: t.name, kind: "covered" }, coveredCount(parseRanges(t.coveredRanges), t.total));
        this.set({ task: t.name, kind: "filtered" }, t.filteredCount);
        this.set({ task: t.name, kind: "produced" }, t.producedCount);
      }
    },
  });
  new Gauge({
    name: "collector_task_status",
    help: "1 for each collector task's current status (IDLE, RUNNING, COMPLETED, STOPPED, ERROR), 0 for the others.",
    labelNames: ["task", "status"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const t of await collector.tasks()) {
        const now = collector.store.statusOf(t);
        for (const s of Object.values(CollectorStatus)) this.set({ task: t.name, status: s }, s === now ? 1 : 0);
      }
    },
  });
}
