// Prometheus metrics at /metrics: what the state machine does (claims, page reports, transitions
// by source and state, sweeps), how long GraphQL operations take, live subscriptions, and the
// keywords per status right now (read at scrape time, from the same index-backed stats query).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Plugin } from "graphql-yoga";
import { type DocumentNode, Kind, type OperationDefinitionNode } from "graphql";
import type { CrawlChange } from "./crawl/store.ts";
import type { CheckpointStats } from "./db/client.ts";

export class Metrics {
  readonly registry = new Registry();

  private transitions = new Counter({
    name: "crawl_transitions_total",
    help: "Keyword status transitions, as logged in CrawlEvent.",
    labelNames: ["source", "from", "to", "reason"] as const,
    registers: [this.registry],
  });
  private pageReports = new Counter({
    name: "crawl_page_reports_total",
    help: "Page reports stored (a repeated page counts again here, once in jobsFound).",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });
  private claims = new Counter({
    name: "crawl_claims_total",
    help: "Keywords leased to crawlers (fresh, resumed and retried).",
    labelNames: ["source", "kind"] as const,
    registers: [this.registry],
  });
  private swept = new Counter({
    name: "crawl_sweep_keywords_total",
    help: "Keywords changed by the scheduled jobs.",
    labelNames: ["job", "source"] as const,
    registers: [this.registry],
  });
  private jobRuns = new Counter({
    name: "crawl_job_runs_total",
    help: "Scheduled job runs (stale sweep, day rollover, history prune) by outcome: ok, error, or skipped (another instance took the tick).",
    labelNames: ["job", "outcome"] as const,
    registers: [this.registry],
  });
  private pruned = new Counter({
    name: "crawl_history_pruned_rows_total",
    help: "History rows deleted by the history prune (HISTORY_RETENTION_DAYS), by table.",
    labelNames: ["table"] as const,
    registers: [this.registry],
  });
  private jobChanged = new Gauge({
    name: "crawl_job_last_run_keywords",
    help: "Keywords the last run of each scheduled job changed.",
    labelNames: ["job"] as const,
    registers: [this.registry],
  });
  private jobLastRun = new Gauge({
    name: "crawl_job_last_run_timestamp_seconds",
    help: "When each scheduled job last ran (Unix time).",
    labelNames: ["job", "outcome"] as const,
    registers: [this.registry],
  });
  readonly claimDuration = new Histogram({
    name: "crawl_claim_duration_seconds",
    help: "claimKeywords over HTTP, from execution start to the answer, by outcome.",
    labelNames: ["outcome"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private coalesced = new Histogram({
    name: "crawl_coalesced_requests",
    help: "Requests written together: on PostgreSQL by one statement (the page reports, the leased completions/heartbeats/releases, or one source's small claims that arrived in the same event-loop turn); on SQLite one source's claims of a turn in one transaction.",
    labelNames: ["kind"] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  readonly operations = new Histogram({
    name: "graphql_operation_duration_seconds",
    help: "GraphQL operations over HTTP, by root field (e.g. claimKeywords).",
    labelNames: ["field", "type", "outcome"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor(opts: {
    subscriptions: () => number;
    /** Open graphql-ws sockets and the operations running on them, by root field. */
    sockets?: () => { sockets: number; operations: Record<string, number> };
    keywordsByStatus: () => Promise<{ source: string; status: string; n: number }[]>;
    /** SQLite: the WAL checkpointer thread's work so far. */
    checkpoints?: () => CheckpointStats;
  }) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "graphql_ws_subscriptions",
      help: "crawlStatusDistribution subscribers on this instance.",
      registers: [this.registry],
      collect() {
        this.set(opts.subscriptions());
      },
    });
    new Gauge({
      name: "graphql_ws_connections",
      help: "Open graphql-ws sockets on this instance.",
      registers: [this.registry],
      collect() {
        this.set(opts.sockets?.().sockets ?? 0);
      },
    });
    new Gauge({
      name: "graphql_ws_operations",
      help: "Subscriptions running on this instance's graphql-ws sockets, by root field.",
      labelNames: ["field"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [field, n] of Object.entries(opts.sockets?.().operations ?? {})) this.set({ field }, n);
      },
    });
    const checkpoints = opts.checkpoints;
    if (checkpoints) {
      new Counter({
        name: "sqlite_checkpoints_total",
        help: "WAL checkpoints run by the checkpointer thread, by mode: passive (beside the writer) or restart (the WAL then starts over).",
        labelNames: ["mode"] as const,
        registers: [this.registry],
        collect() {
          const s = checkpoints();
          this.reset();
          this.inc({ mode: "passive" }, s.runs - s.restarts);
          this.inc({ mode: "restart" }, s.restarts);
        },
      });
      new Counter({
        name: "sqlite_checkpoint_seconds_total",
        help: "Time the checkpointer thread spent in checkpoints (off the event loop).",
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(checkpoints().seconds);
        },
      });
      new Gauge({
        name: "sqlite_wal_pages",
        help: "Pages in the SQLite WAL at the last checkpoint.",
        registers: [this.registry],
        collect() {
          this.set(checkpoints().walPages);
        },
      });
      new Gauge({
        name: "sqlite_checkpointer_up",
        help: "1 while the checkpointer thread runs; 0 after it failed (commits then checkpoint on the event loop).",
        registers: [this.registry],
        collect() {
          this.set(checkpoints().running ? 1 : 0);
        },
      });
    }
    new Gauge({
      name: "crawl_keywords",
      help: "Keywords per source and status for today's crawl day.",
      labelNames: ["source", "status"] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const r of await opts.keywordsByStatus()) this.set({ source: r.source, status: r.status }, r.n);
      },
    });
  }

  /** Count what a committed transaction of the crawl store did. */
  record(change: CrawlChange): void {
    for (const t of change.transitions ?? []) {
      this.transitions.inc({ source: change.sourceId, from: t.from, to: t.to, reason: t.reason });
      if (t.to === "CRAWLING") this.claims.inc({ source: change.sourceId, kind: t.reason });
      if (t.reason === "stale" || t.reason === "rollover") this.swept.inc({ job: t.reason, source: change.sourceId });
    }
    if (change.pageReports) this.pageReports.inc({ source: change.sourceId }, change.pageReports);
  }

  /** One coalesced write of the crawl store and the requests it served. */
  recordCoalesced(kind: string, requests: number): void {
    this.coalesced.observe({ kind }, requests);
  }

  /** Rows a history prune deleted, per table. */
  historyPruned(deleted: Record<string, number>): void {
    for (const [table, n] of Object.entries(deleted)) this.pruned.inc({ table }, n);
  }

  /** A scheduled job's run: its outcome and how many keywords it changed. */
  jobRun(job: string, outcome: "ok" | "error" | "skipped", changed?: number): void {
    this.jobRuns.inc({ job, outcome });
    this.jobLastRun.set({ job, outcome }, Date.now() / 1000);
    if (changed !== undefined) this.jobChanged.set({ job }, changed);
  }

  /** Yoga plugin timing each operation by its first root field. */
  plugin(): Plugin {
    const histogram = this.operations;
    const claims = this.claimDuration;
    return {
      onExecute({ args }) {
        const doc = args.document as DocumentNode;
        const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
        const first = op?.selectionSet.selections.find((sel) => sel.kind === Kind.FIELD);
        const field = first && first.kind === Kind.FIELD ? first.name.value : "unknown";
        const end = histogram.startTimer({ field, type: op?.operation ?? "unknown" });
        const endClaim = field === "claimKeywords" ? claims.startTimer() : undefined;
        return {
          onExecuteDone({ result }) {
            const failed = "errors" in result && Boolean((result as { errors?: unknown[] }).errors?.length);
            end({ outcome: failed ? "error" : "ok" });
            endClaim?.({ outcome: failed ? "error" : "ok" });
          },
        };
      },
    };
  }
}
