// Once per tick across all server instances: every instance's cron fires, and the one whose insert
// of the (job, tick) row lands runs that tick; the others see the row and skip. The row commits
// before the job runs, so a run that crashes half-way is not repeated in the same tick — the next
// tick picks up what it left (the jobs re-scan), and concurrent runs are safe anyway (every write
// the jobs make is a compare-and-set on the keyword's version).
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { Database } from "../db/client.ts";

/** Rows kept per job; older ones are pruned by the run that claims a tick. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** This process's name in JobTick rows and logs. */
export const instanceId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;

/** true when this instance won `tick` of `job` and should run it. */
export function claimTick(db: Database, job: string, tick: Date, instance = instanceId): Promise<boolean> {
  return db.transaction(async (tx) => {
    const won = await tx.execute(Prisma.sql`
      INSERT INTO "JobTick" ("job", "tick", "instance", "claimedAt") VALUES (${job}, ${tick}, ${instance}, ${new Date()})
      ON CONFLICT ("job", "tick") DO NOTHING`);
    if (won === 1) await tx.execute(Prisma.sql`DELETE FROM "JobTick" WHERE "job" = ${job} AND "tick" < ${new Date(tick.getTime() - KEEP_MS)}`);
    return won === 1;
  });
}
