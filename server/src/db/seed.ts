// Sources are data: seeded once, then owned by operators (updateSource). Seeding never overwrites
// settings an operator changed.
import type { Db } from "./client.ts";

export const DEFAULT_SOURCES = [
  { id: "boss", name: "Boss直聘", maxPages: 3 },
  { id: "qcwy", name: "前程无忧 51job", maxPages: 50 },
  { id: "zhilian", name: "智联招聘", maxPages: 15 },
] as const;

export async function seedSources(db: Db): Promise<number> {
  let created = 0;
  await db.$transaction(async (tx) => {
    for (const s of DEFAULT_SOURCES) {
      const found = await tx.source.findUnique({ where: { id: s.id }, select: { id: true } });
      if (found) continue;
      await tx.source.create({ data: { ...s, maxRetries: 3, staleAfterSeconds: 1800, enabled: true } });
      created++;
    }
  });
  return created;
}
