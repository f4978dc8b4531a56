// Adding keywords: the one code path behind the importKeywords mutation and the operators' CLI.
// Idempotent: (source, city, job) is unique, so a re-import adds only what is new.
import { z } from "zod";
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { Database } from "../db/client.ts";
import { notFound } from "../errors.ts";
import { city as cityField, job as jobField, parseInput, sourceId as sourceField } from "../schema/validate.ts";

export interface ImportResult {
  sourceId: string;
  created: number;
  existing: number;
  /** Distinct (city, job) pairs in the request. */
  requested: number;
}

/** Largest single import; the CLI splits bigger files. */
export const MAX_IMPORT_PAIRS = 100_000;
const CHUNK = 500;

const pairsInput = z.object({
  sourceId: sourceField,
  pairs: z.array(z.tuple([cityField, jobField])).max(MAX_IMPORT_PAIRS, `at most ${MAX_IMPORT_PAIRS} keywords per import`),
});

/** Every city with every job. */
export function crossProduct(cities: string[], jobs: string[]): [string, string][] {
  return cities.flatMap((c) => jobs.map((j) => [c, j] as [string, string]));
}

export async function importKeywords(db: Database, sourceId: string, pairs: [string, string][]): Promise<ImportResult> {
  const input = parseInput(pairsInput, { sourceId, pairs });
  const unique = [...new Map(input.pairs.map(([c, j]) => [`${c}\u0000${j}`, [c, j] as const])).values()];
  const now = new Date();
  const created = await db.transaction(async (tx) => {
      const source = await tx.query(Prisma.sql`SELECT "id" FROM "Source" WHERE "id" = ${input.sourceId}`);
      if (!source.length) throw notFound(`source "${input.sourceId}" does not exist`);
      let created = 0;
      for (let i = 0; i < unique.length; i += CHUNK) {
        const rows = unique
          .slice(i, i + CHUNK)
          .map(([c, j]) => Prisma.sql`(${input.sourceId}, ${c}, ${j}, ${now}, ${now})`);
        created += await tx.execute(Prisma.sql`
          INSERT INTO "Keyword" ("sourceId", "city", "job", "createdAt", "updatedAt")
          VALUES ${Prisma.join(rows)}
          ON CONFLICT ("sourceId", "city", "job") DO NOTHING`);
      }
      if (created) {
        await tx.execute(Prisma.sql`UPDATE "Source" SET "keywordCount" = "keywordCount" + ${created} WHERE "id" = ${input.sourceId}`);
      }
      return created;
  });
  return { sourceId: input.sourceId, created, existing: unique.length - created, requested: unique.length };
}
