// The collector: task configuration, runs in the background, schedules (croner) and autostart,
// sinks, lag. GraphQL resolvers and the server call this; only ./store.ts writes.
import { readFileSync } from "node:fs";
import { Cron } from "croner";
import type { Logger } from "pino";
import type { CollectorTask } from "../../../generated/sqlite/client.ts";
import { CollectorSink, CollectorStatus } from "../../../generated/sqlite/enums.ts";
import type { Config } from "../config.ts";
import type { CrawlCalendar } from "../crawl/crawl-day.ts";
import type { Database } from "../db/client.ts";
import { apiError, badInput, ErrorCode, notFound } from "../errors.ts";
import type { Bus } from "../live/bus.ts";
import { coveredCount, parseRanges } from "./coverage.ts";
import { runTask, type RunOutcome } from "./runner.ts";
import { DatabaseSink } from "./sinks/database.ts";
import { NatsBroker, NatsSink } from "./sinks/nats.ts";
import { type Sink, type SinkLag, SinkUnavailableError } from "./sinks/sink.ts";
import { CollectorStore, type RunTrigger } from "./store.ts";
import { type TaskConfig, type TaskPatch, tasksFileSchema } from "./task-config.ts";
import { HttpJsonUpstream } from "./upstream/http-json.ts";

/** How long stopCollectorTask waits for a local run to reach its batch boundary. */
const STOP_WAIT_MS = 15_000;
/** Time limit for asking the upstream its total when reporting lag. */
const HEAD_TIMEOUT_MS = 3_000;

export interface CollectorLag {
  /** Upstream total right now (null: the upstream did not answer; see error). */
  head: number | null;
  /** Upstream records the task has not dealt with yet: head − covered offsets. */
  behindHead: number | null;
  sink: SinkLag | null;
  error: string | null;
}

const KAFKA_UNSUPPORTED =
  "the KAFKA sink is not available in this build: no Kafka-protocol broker can run beside it; use NATS or DATABASE";

interface LocalRun {
  controller: AbortController;
  done: Promise<RunOutcome>;
}

export class CollectorService {
  readonly store: CollectorStore;
  private readonly broker: NatsBroker;
  private readonly running = new Map<number, LocalRun>();
  private readonly schedules = new Map<number, Cron>();
  private scheduling = false;

  constructor(
    private readonly database: Database,
    private readonly calendar: CrawlCalendar,
    private readonly bus: Bus,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.store = new CollectorStore(database, calendar.clock, config.COLLECTOR_STALE_RUN_MS);
    this.broker = new NatsBroker(config.NATS_URL);
  }

  private changed(taskId: number) {
    void this.bus.publish("collectorChanged", taskId, { taskId });
  }

  private async mustFind(id: number): Promise<CollectorTask> {
    const task = await this.store.find(id);
    if (!task) throw notFound(`collector task ${id} does not exist`);
    return task;
  }

  private checkSinkSupported(sink: CollectorSink | null | undefined) {
    if (sink === CollectorSink.KAFKA) throw apiError(ErrorCode.SINK_UNAVAILABLE, KAFKA_UNSUPPORTED);
  }

  async create(config: TaskConfig): Promise<CollectorTask> {
    this.checkSinkSupported(config.sink);
    const task = await this.store.create(config);
    if (!task) throw badInput(`a collector task named "${config.name}" exists already`);
    this.reschedule(task);
    this.changed(task.id);
    return task;
  }

  async update(id: number, patch: TaskPatch): Promise<CollectorTask> {
    this.checkSinkSupported(patch.sink);
    const done = await this.store.update(id, patch);
    if (done === "name-taken") throw badInput(`a collector task named "${patch.name}" exists already`);
    if (!done) throw notFound(`collector task ${id} does not exist`);
    const task = await this.mustFind(id);
    this.reschedule(task);
    this.changed(id);
    return task;
  }

  /** The sink a task writes to, connected and ready; SINK_UNAVAILABLE when it cannot be used. */
  private async openSink(task: CollectorTask, create = true): Promise<Sink> {
    try {
      switch (task.sink) {
        case CollectorSink.DATABASE:
          return new DatabaseSink(this.database, this.calendar.clock, task.id);
        case CollectorSink.NATS:
          return await NatsSink.open(this.broker, task.stream ?? `COLLECTOR_${task.id}`, task.id, create);
        case CollectorSink.KAFKA:
          throw new SinkUnavailableError(KAFKA_UNSUPPORTED);
      }
    } catch (e) {
      if (e instanceof SinkUnavailableError) throw apiError(ErrorCode.SINK_UNAVAILABLE, e.message);
      throw e;
    }
  }

  /**
   * Start a run in the background (INVALID_TRANSITION when one is going or the task is disabled,
   * SINK_UNAVAILABLE when its sink cannot be reached). Resolves once the run holds the task.
   */
  async start(id: number, opts: { reset?: boolean; trigger?: RunTrigger } = {}): Promise<CollectorTask> {
    const before = await this.mustFind(id);
    if (this.store.statusOf(before) === CollectorStatus.RUNNING) {
      throw apiError(ErrorCode.INVALID_TRANSITION, `collector task ${id} is already running (run ${before.runId})`, { status: CollectorStatus.RUNNING });
    }
    if (!before.enabled) throw apiError(ErrorCode.INVALID_TRANSITION, `collector task ${id} is disabled; enable it first`);
    const sink = await this.openSink(before);
    const runId = await this.store.claimRun(id, opts.trigger ?? "manual", opts.reset ?? false);
    if (runId === null) {
      throw apiError(ErrorCode.INVALID_TRANSITION, `collector task ${id} is already running`, { status: CollectorStatus.RUNNING });
    }
    const task = await this.mustFind(id);
    const controller = new AbortController();
    const upstream = new HttpJsonUpstream({ url: task.url, idField: task.idField, timeoutMs: this.config.COLLECTOR_FETCH_TIMEOUT_MS });
    const done = runTask(task, runId, controller.signal, {
      store: this.store,
      calendar: this.calendar,
      upstream,
      sink,
      retry: {
        retries: this.config.COLLECTOR_MAX_RETRIES,
        minTimeoutMs: this.config.COLLECTOR_RETRY_MIN_MS,
        maxTimeoutMs: this.config.COLLECTOR_RETRY_MAX_MS,
      },
      log: this.log,
      changed: () => this.changed(id),
    }).catch((err: Error) => {
      // Only the final bookkeeping can land here (the database went away): log, never crash.
      this.log.error({ err, taskId: id, runId }, "collector run could not record its end");
      return { status: CollectorStatus.ERROR, error: err.message };
    });
    const local = { controller, done };
    this.running.set(id, local);
    void done.finally(() => {
      if (this.running.get(id) === local) this.running.delete(id);
    });
    this.changed(id);
    return task;
  }

  /** Stop a run at its next batch boundary (INVALID_TRANSITION when none is going). */
  async stop(id: number): Promise<CollectorTask> {
    const task = await this.mustFind(id);
    const local = this.running.get(id);
    const status = this.store.statusOf(task);
    if (!local && status !== CollectorStatus.RUNNING) {
      throw apiError(ErrorCode.INVALID_TRANSITION, `collector task ${id} is not running (${status})`, { status });
    }
    // The flag reaches a run on any instance; a local one is also interrupted mid-request.
    await this.store.requestStop(id);
    if (local) {
      local.controller.abort(new Error("stopped"));
      await Promise.race([local.done, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
    }
    return this.mustFind(id);
  }

  /** Forget the progress: coverage, counts, error (INVALID_TRANSITION while running). */
  async reset(id: number): Promise<CollectorTask> {
    await this.mustFind(id);
    if (this.running.has(id) || !(await this.store.reset(id))) {
      throw apiError(ErrorCode.INVALID_TRANSITION, `collector task ${id} is running; stop it before a reset`, { status: CollectorStatus.RUNNING });
    }
    this.changed(id);
    return this.mustFind(id);
  }

  async lag(task: CollectorTask): Promise<CollectorLag> {
    const errors: string[] = [];
    const upstream = new HttpJsonUpstream({ url: task.url, idField: task.idField, timeoutMs: HEAD_TIMEOUT_MS });
    const head = await upstream.total().catch((e: Error) => (errors.push(e.message), null));
    // Reporting lag never creates a stream.
    const sink = await this.openSink(task, false)
      .then((s) => s.lag())
      .catch((e: Error) => (errors.push(e.message), null));
    return {
      head,
      behindHead: head === null ? null : head - coveredCount(parseRanges(task.coveredRanges), head),
      sink,
      error: errors.length ? errors.join("; ") : null,
    };
  }

  tasks(): Promise<CollectorTask[]> {
    return this.database.reader.collectorTask.findMany({ orderBy: { id: "asc" } });
  }

  /** Cron schedules for enabled tasks that have one; autostart tasks start now. */
  async startScheduling(): Promise<void> {
    this.scheduling = true;
    const tasks = await this.tasks();
    for (const t of tasks) this.reschedule(t);
    for (const t of tasks.filter((t) => t.enabled && t.autoStart)) await this.startQuietly(t.id, "autostart");
  }

  private async startQuietly(id: number, trigger: RunTrigger) {
    try {
      await this.start(id, { trigger });
    } catch (err) {
      // A tick while the task runs is routine; anything else (sink down, disabled) deserves a warning.
      const running = (err as { extensions?: { status?: string } }).extensions?.status === CollectorStatus.RUNNING;
      this.log[running ? "info" : "warn"]({ taskId: id, trigger, err: (err as Error).message }, "collector task not started");
    }
  }

  private reschedule(task: CollectorTask) {
    this.schedules.get(task.id)?.stop();
    this.schedules.delete(task.id);
    if (!this.scheduling || !task.enabled || !task.schedule) return;
    this.schedules.set(
      task.id,
      new Cron(task.schedule, { name: `collector-${task.id}`, timezone: this.config.CRAWL_TZ }, () => this.startQuietly(task.id, "schedule")),
    );
  }

  /** Next scheduled start, if any. */
  nextRunAt(taskId: number): Date | null {
    return this.schedules.get(taskId)?.nextRun() ?? null;
  }

  /** Create the tasks of COLLECTOR_TASKS_FILE that do not exist yet (matched by name). */
  async seedFromFile(path: string): Promise<number> {
    let entries: TaskConfig[];
    try {
      const parsed = tasksFileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
      if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      entries = parsed.data.tasks;
    } catch (e) {
      throw new Error(`COLLECTOR_TASKS_FILE=${path}: ${(e as Error).message}`);
    }
    let created = 0;
    for (const entry of entries) {
      if (entry.sink === CollectorSink.KAFKA) throw new Error(`COLLECTOR_TASKS_FILE=${path}: task "${entry.name}": ${KAFKA_UNSUPPORTED}`);
      if (await this.store.findByName(entry.name)) continue;
      if (await this.store.create(entry)) created++;
    }
    return created;
  }

  /** Stop schedules and every local run (each ends STOPPED at its batch boundary), close the broker. */
  async close(): Promise<void> {
    this.scheduling = false;
    for (const c of this.schedules.values()) c.stop();
    this.schedules.clear();
    const runs = [...this.running.entries()];
    await Promise.all(runs.map(([id]) => this.store.requestStop(id).catch(() => {})));
    for (const [, r] of runs) r.controller.abort(new Error("server stopping"));
    await Promise.all(runs.map(([, r]) => r.done));
    await this.broker.close();
  }
}
