// Sources are data: seeded once, then owned by operators (updateSource). Seeding never overwrites
// settings an operator changed.
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { Database } from "./client.ts";

export const DEFAULT_SOURCES = [
  { id: "boss", name: "Boss直聘", maxPages: 3 },
  { id: "qcwy", name: "前程无忧 51job", maxPages: 50 },
  { id: "zhilian", name: "智联招聘", maxPages: 15 },
] as const;

export async function seedSources(db: Database): Promise<number> {
  const now = new Date();
  return db.transaction(async (tx) => {
    let created = 0;
    for (const s of DEFAULT_SOURCES) {
      created += await tx.execute(Prisma.sql`
        INSERT INTO "Source" ("id", "name", "maxPages", "maxRetries", "staleAfterSeconds", "enabled", "createdAt", "updatedAt")
        VALUES (${s.id}, ${s.name}, ${s.maxPages}, 3, 1800, ${true}, ${now}, ${now})
        ON CONFLICT ("id") DO NOTHING`);
    }
    return created;
  });
}
