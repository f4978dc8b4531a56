// Adding keywords: the one code path behind the importKeywords mutation and the operators' CLI.
// Idempotent: (source, city, job) is unique, so a re-import adds only what is new.
import { z } from "zod";
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { Database, Provider, SqlTx } from "../db/client.ts";
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

/** A (city, job) pair as one string key. */
const pairKey = (city: string, job: string) => `${city}\u0000${job}`;

/**
 * The pairs of `pairs` that `sourceId` has already, as "city\0job". PostgreSQL: one index lookup per
 * pair (the LIMIT keeps the planner from a generic plan that hashes the whole source's keywords).
 */
async function existingPairs(tx: SqlTx, provider: Provider, sourceId: string, pairs: (readonly [string, string])[]) {
  const rows = await tx.query<{ city: string; job: string }>(
    provider === "postgres"
      ? Prisma.sql`
        SELECT k."city", k."job" FROM unnest(${pairs.map(([c]) => c)}::text[], ${pairs.map(([, j]) => j)}::text[]) AS v ("city", "job")
        CROSS JOIN LATERAL (SELECT "city", "job" FROM "Keyword"
                             WHERE "sourceId" = ${sourceId} AND "city" = v."city" AND "job" = v."job" LIMIT 1) k`
      : Prisma.sql`
        SELECT k."city", k."job" FROM (SELECT column1 AS "city", column2 AS "job" FROM (VALUES ${Prisma.join(pairs.map(([c, j]) => Prisma.sql`(${c}, ${j})`))})) AS v
        JOIN "Keyword" k ON k."sourceId" = ${sourceId} AND k."city" = v."city" AND k."job" = v."job"`,
  );
  return new Set(rows.map((k) => pairKey(k.city, k.job)));
}

/** Every city with every job. */
export function crossProduct(cities: string[], jobs: string[]): [string, string][] {
  return cities.flatMap((c) => jobs.map((j) => [c, j] as [string, string]));
}

export async function importKeywords(db: Database, sourceId: string, pairs: [string, string][]): Promise<ImportResult> {
  const input = parseInput(pairsInput, { sourceId, pairs });
  const unique = [...new Map(input.pairs.map(([c, j]) => [pairKey(c, j), [c, j] as const])).values()];
  const now = new Date();
  const created = await db.transaction(async (tx) => {
      const [source] = await tx.query<{ keywordCount: number }>(Prisma.sql`SELECT "keywordCount" FROM "Source" WHERE "id" = ${input.sourceId}`);
      if (!source) throw notFound(`source "${input.sourceId}" does not exist`);
      // A source's first import has nothing to look up (the pairs are distinct).
      const empty = Number(source.keywordCount) === 0;
      let created = 0;
      for (let i = 0; i < unique.length; i += CHUNK) {
        const chunk = unique.slice(i, i + CHUNK);
        // Only the pairs not there yet are inserted: an INSERT takes an id from the sequence
        // (PostgreSQL) or AUTOINCREMENT record (SQLite) for every row it proposes, conflicting or
        // not, and a keyword list re-imported every day would use up the ids for nothing.
        const have = empty ? new Set<string>() : await existingPairs(tx, db.provider, input.sourceId, chunk);
        const rows = chunk
          .filter(([c, j]) => !have.has(pairKey(c, j)))
          .map(([c, j]) => Prisma.sql`(${input.sourceId}, ${c}, ${j}, ${now}, ${now})`);
        if (!rows.length) continue;
        // ON CONFLICT: a concurrent import of the same pair.
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
