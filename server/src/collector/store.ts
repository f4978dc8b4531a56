// The only writer of collector tasks, runs and progress. Every write is one transaction on the
// raw driver (both databases); a run holds its task through a compare-and-set on (status, runId),
// so two starts, here or on another instance, never run one task twice.
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { CollectorRun, CollectorTask } from "../../../generated/sqlite/client.ts";
import { CollectorStatus } from "../../../generated/sqlite/enums.ts";
import type { Clock } from "../crawl/crawl-day.ts";
import { type Database, enumParam, type SqlTx } from "../db/client.ts";
import { addRange, formatRanges, parseRanges, type Range } from "./coverage.ts";
import type { TaskConfig, TaskPatch } from "./task-config.ts";


export type RunTrigger = "manual" | "schedule" | "autostart";

/** What one batch did, committed with its coverage. */
export interface BatchCommit {
  from: number;
  to: number;
  /** Upstream total as the batch saw it. */
  total: number;
  fetched: number;
  filtered: number;
  produced: number;
  /** Of those, records the sink already had. */
  duplicates: number;
  expiredBatches: number;
  /** Set when the first run's expiry rule ends the run: [0, from) is declared stale (covered). */
  staleBelow: number | null;
}

const empty = (s: string | null | undefined) => (s === "" ? null : s);

export class CollectorStore {
  /**
   * @param staleRunMs A RUNNING task whose heartbeat is older than this was interrupted (its server
   *   died): it reads as STOPPED and may be started again. Runs beat six times per period.
   */
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    readonly staleRunMs: number,
  ) {}

  get heartbeatMs(): number {
    return Math.max(100, Math.floor(this.staleRunMs / 6));
  }

  /** The status a reader should see: a RUNNING row whose heartbeat stopped was interrupted. */
  statusOf(task: Pick<CollectorTask, "status" | "heartbeatAt">): CollectorStatus {
    if (task.status !== CollectorStatus.RUNNING) return task.status;
    const fresh = task.heartbeatAt && this.clock.now().getTime() - task.heartbeatAt.getTime() < this.staleRunMs;
    return fresh ? CollectorStatus.RUNNING : CollectorStatus.STOPPED;
  }

  private status(value: CollectorStatus) {
    return enumParam(this.database.provider, "CollectorStatus", value);
  }

  private forUpdate() {
    return this.database.provider === "postgres" ? Prisma.sql` FOR UPDATE` : Prisma.empty;
  }

  find(id: number): Promise<CollectorTask | null> {
    return this.database.reader.collectorTask.findUnique({ where: { id } });
  }

  findByName(name: string): Promise<CollectorTask | null> {
    return this.database.reader.collectorTask.findUnique({ where: { name } });
  }

  /** Creates the task; null when the name is taken. */
  async create(c: TaskConfig): Promise<CollectorTask | null> {
    const now = this.clock.now();
    const insert = (tx: SqlTx) =>
      tx.query<{ id: number }>(Prisma.sql`INSERT INTO "CollectorTask"
        ("name", "url", "idField", "enabled", "autoStart", "batchSize", "filterDays", "maxExpiredBatches",
         "schedule", "sink", "stream", "createdAt", "updatedAt")
        VALUES (${c.name}, ${c.url}, ${c.idField}, ${c.enabled}, ${c.autoStart}, ${c.batchSize}, ${c.filterDays},
          ${c.maxExpiredBatches}, ${empty(c.schedule)}, ${enumParam(this.database.provider, "CollectorSink", c.sink)},
          ${empty(c.stream)}, ${now}, ${now})
        RETURNING "id"`);
    let id: number | null;
    try {
      id = await this.database.transaction(async (tx) => {
        const taken = await tx.query(Prisma.sql`SELECT 1 FROM "CollectorTask" WHERE "name" = ${c.name}`);
        return taken.length ? null : Number((await insert(tx))[0]!.id);
      });
    } catch (e) {
      // Two creates of one name at once on PostgreSQL: the unique index refuses the second.
      if ((e as { code?: string }).code === "23505") return null;
      throw e;
    }
    return id === null ? null : this.find(id);
  }

  /** Applies the fields given; false when the task does not exist, "name-taken" on a clash. */
  async update(id: number, patch: TaskPatch): Promise<boolean | "name-taken"> {
    return this.database.transaction(async (tx) => {
      if (patch.name) {
        const other = await tx.query(Prisma.sql`SELECT 1 FROM "CollectorTask" WHERE "name" = ${patch.name} AND "id" <> ${id}`);
        if (other.length) return "name-taken" as const;
      }
      const sets = Object.entries(patch).map(([column, value]) => {
        const v = column === "sink" ? enumParam(this.database.provider, "CollectorSink", value as string) : column === "schedule" || column === "stream" ? empty(value as string) : value;
        return Prisma.sql`${Prisma.raw(`"${column}"`)} = ${v}`;
      });
      sets.push(Prisma.sql`"updatedAt" = ${this.clock.now()}`);
      return (await tx.execute(Prisma.sql`UPDATE "CollectorTask" SET ${Prisma.join(sets)} WHERE "id" = ${id}`)) > 0;
    });
  }

  /**
   * Take the task for a new run (optionally from a reset progress). Returns the run id, or null
   * when another run holds it. A RUNNING row without a heartbeat for staleRunMs is taken over
   * (its server died); its run is closed as STOPPED.
   */
  async claimRun(id: number, trigger: RunTrigger, reset: boolean): Promise<number | null> {
    const now = this.clock.now();
    const staleBefore = new Date(now.getTime() - this.staleRunMs);
    return this.database.transaction(async (tx) => {
      const resetSets = reset
        ? Prisma.sql`, "coveredRanges" = '[]', "filteredCount" = 0, "producedCount" = 0, "total" = 0`
        : Prisma.empty;
      const taken = await tx.execute(Prisma.sql`UPDATE "CollectorTask"
        SET "status" = ${this.status(CollectorStatus.RUNNING)}, "stopRequested" = ${false}, "heartbeatAt" = ${now},
            "lastUpdate" = ${now}, "lastError" = '', "updatedAt" = ${now} ${resetSets}
        WHERE "id" = ${id} AND ("status" <> ${this.status(CollectorStatus.RUNNING)} OR "heartbeatAt" IS NULL OR "heartbeatAt" < ${staleBefore})`);
      if (!taken) return null;
      await tx.execute(Prisma.sql`UPDATE "CollectorRun"
        SET "status" = ${this.status(CollectorStatus.STOPPED)}, "finishedAt" = ${now}, "error" = 'interrupted: its server stopped without finishing it'
        WHERE "taskId" = ${id} AND "status" = ${this.status(CollectorStatus.RUNNING)}`);
      const [run] = await tx.query<{ id: number }>(Prisma.sql`INSERT INTO "CollectorRun" ("taskId", "status", "trigger", "startedAt")
        VALUES (${id}, ${this.status(CollectorStatus.RUNNING)}, ${trigger}, ${now}) RETURNING "id"`);
      await tx.execute(Prisma.sql`UPDATE "CollectorTask" SET "runId" = ${run!.id} WHERE "id" = ${id}`);
      return Number(run!.id);
    });
  }

  async setRunTotal(taskId: number, runId: number, total: number): Promise<void> {
    const now = this.clock.now();
    await this.database.transaction(async (tx) => {
      await tx.execute(Prisma.sql`UPDATE "CollectorRun" SET "total" = ${total} WHERE "id" = ${runId}`);
      await tx.execute(Prisma.sql`UPDATE "CollectorTask" SET "total" = ${total}, "lastUpdate" = ${now}, "heartbeatAt" = ${now}
        WHERE "id" = ${taskId} AND "runId" = ${runId}`);
    });
  }

  /**
   * Record a batch: its offsets become covered and its counts are added, in one transaction, so a
   * batch is counted exactly once however often it is fetched. Returns the coverage now and whether
   * a stop was requested, or null when the run no longer holds the task.
   */
  async commitBatch(taskId: number, runId: number, b: BatchCommit): Promise<{ stopRequested: boolean; ranges: Range[] } | null> {
    const now = this.clock.now();
    return this.database.transaction(async (tx) => {
      const [task] = await tx.query<{ coveredRanges: string; stopRequested: boolean | number }>(Prisma.sql`
        SELECT "coveredRanges", "stopRequested" FROM "CollectorTask"
        WHERE "id" = ${taskId} AND "runId" = ${runId} AND "status" = ${this.status(CollectorStatus.RUNNING)}${this.forUpdate()}`);
      if (!task) return null;
      const ranges = addRange(parseRanges(task.coveredRanges), b.staleBelow === null ? b.from : 0, b.to);
      await tx.execute(Prisma.sql`UPDATE "CollectorTask"
        SET "coveredRanges" = ${formatRanges(ranges)}, "total" = ${b.total},
            "filteredCount" = "filteredCount" + ${b.filtered}, "producedCount" = "producedCount" + ${b.produced},
            "lastUpdate" = ${now}, "heartbeatAt" = ${now}, "updatedAt" = ${now}
        WHERE "id" = ${taskId}`);
      await tx.execute(Prisma.sql`UPDATE "CollectorRun"
        SET "batches" = "batches" + 1, "fetchedCount" = "fetchedCount" + ${b.fetched},
            "filteredCount" = "filteredCount" + ${b.filtered}, "producedCount" = "producedCount" + ${b.produced},
            "duplicateCount" = "duplicateCount" + ${b.duplicates}, "expiredBatches" = ${b.expiredBatches}, "staleBelow" = ${b.staleBelow}
        WHERE "id" = ${runId}`);
      return { stopRequested: Boolean(task.stopRequested), ranges };
    });
  }

  async heartbeat(taskId: number, runId: number): Promise<void> {
    await this.database.transaction((tx) =>
      tx.execute(Prisma.sql`UPDATE "CollectorTask" SET "heartbeatAt" = ${this.clock.now()}
        WHERE "id" = ${taskId} AND "runId" = ${runId} AND "status" = ${this.status(CollectorStatus.RUNNING)}`),
    );
  }

  async finishRun(taskId: number, runId: number, status: CollectorStatus, error: string): Promise<void> {
    const now = this.clock.now();
    await this.database.transaction(async (tx) => {
      await tx.execute(Prisma.sql`UPDATE "CollectorRun" SET "status" = ${this.status(status)}, "finishedAt" = ${now}, "error" = ${error}
        WHERE "id" = ${runId} AND "status" = ${this.status(CollectorStatus.RUNNING)}`);
      await tx.execute(Prisma.sql`UPDATE "CollectorTask"
        SET "status" = ${this.status(status)}, "lastError" = ${error}, "stopRequested" = ${false}, "lastUpdate" = ${now}, "updatedAt" = ${now}
        WHERE "id" = ${taskId} AND "runId" = ${runId} AND "status" = ${this.status(CollectorStatus.RUNNING)}`);
    });
  }

  /** Ask the run holding the task to stop at its next batch; false when no live run holds it. */
  async requestStop(id: number): Promise<boolean> {
    const staleBefore = new Date(this.clock.now().getTime() - this.staleRunMs);
    const n = await this.database.transaction((tx) =>
      tx.execute(Prisma.sql`UPDATE "CollectorTask" SET "stopRequested" = ${true}
        WHERE "id" = ${id} AND "status" = ${this.status(CollectorStatus.RUNNING)} AND "heartbeatAt" >= ${staleBefore}`),
    );
    return n > 0;
  }

  /** Forget the progress (coverage, counts, error): IDLE. False when a live run holds the task. */
  async reset(id: number): Promise<boolean> {
    const now = this.clock.now();
    const staleBefore = new Date(now.getTime() - this.staleRunMs);
    const n = await this.database.transaction(async (tx) => {
      const changed = await tx.execute(Prisma.sql`UPDATE "CollectorTask"
        SET "status" = ${this.status(CollectorStatus.IDLE)}, "coveredRanges" = '[]', "filteredCount" = 0, "producedCount" = 0,
            "total" = 0, "lastError" = '', "stopRequested" = ${false}, "lastUpdate" = ${now}, "updatedAt" = ${now}
        WHERE "id" = ${id} AND ("status" <> ${this.status(CollectorStatus.RUNNING)} OR "heartbeatAt" IS NULL OR "heartbeatAt" < ${staleBefore})`);
      if (changed) {
        await tx.execute(Prisma.sql`UPDATE "CollectorRun"
          SET "status" = ${this.status(CollectorStatus.STOPPED)}, "finishedAt" = ${now}, "error" = 'interrupted: its server stopped without finishing it'
          WHERE "taskId" = ${id} AND "status" = ${this.status(CollectorStatus.RUNNING)}`);
      }
      return changed;
    });
    return n > 0;
  }

  runs(taskId: number, last: number): Promise<CollectorRun[]> {
    return this.database.reader.collectorRun.findMany({ where: { taskId }, orderBy: { id: "desc" }, take: last });
  }
}
