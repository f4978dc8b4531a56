// The DATABASE sink (embedded default): records in CollectorRecord, one row per (task, key).
// INSERT … ON CONFLICT DO NOTHING is the deduplication, on SQLite and PostgreSQL alike.
import { Prisma } from "../../../../generated/sqlite/client.ts";
import type { Database } from "../../db/client.ts";
import type { Clock } from "../../crawl/crawl-day.ts";
import type { UpstreamRecord } from "../upstream/upstream.ts";
import type { Sink, SinkLag } from "./sink.ts";

export class DatabaseSink implements Sink {
  readonly target = "table CollectorRecord";

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly taskId: number,
  ) {}

  async publish(records: UpstreamRecord[]) {
    if (!records.length) return { added: 0, duplicates: 0 };
    const now = this.clock.now();
    const rows = records.map((r) => Prisma.sql`(${this.taskId}, ${r.key}, ${r.offset}, ${JSON.stringify(r.data)}, ${now})`);
    const added = await this.database.transaction((tx) =>
      tx.execute(Prisma.sql`INSERT INTO "CollectorRecord" ("taskId", "key", "offset", "data", "collectedAt")
        VALUES ${Prisma.join(rows)} ON CONFLICT ("taskId", "key") DO NOTHING`),
    );
    return { added, duplicates: records.length - added };
  }

  async lag(): Promise<SinkLag> {
    const [row] = await this.database.query<{ n: number | bigint | string }>(
      Prisma.sql`SELECT COUNT(*) AS n FROM "CollectorRecord" WHERE "taskId" = ${this.taskId}`,
    );
    // Nothing consumes the table on its own: readers query it.
    return { messages: Number(row?.n ?? 0), pending: null, consumers: [] };
  }
}
