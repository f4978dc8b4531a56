// Postings of one crawled page: stored once per (source, externalId) with first/last seen times,
// and the page's sightings replaced, in the transaction that checks the crawler's lease. A page's
// sightings are the postings its page report counts, so jobsFound and the postings agree; a
// replayed page replaces its sightings and is counted once, and a restarted crawl (reset) sheds
// the sightings of pages it has not reported again.
import { Prisma } from "../../../generated/sqlite/client.ts";
import type { SqlTx } from "../db/client.ts";
import type { CrawlStore } from "../crawl/store.ts";

export interface PostingInput {
  externalId: string;
  title: string;
  company?: string | null;
  city?: string | null;
  salary?: string | null;
  url?: string | null;
  publishedAt?: Date | null;
}

export interface SubmitResult {
  page: number;
  /** Distinct postings recorded for the page: report this as the page's jobsFound. */
  accepted: number;
  /** Postings seen for the first time. */
  created: number;
}

/** Rows per statement: keeps every statement well under SQLite's bound-parameter limit. */
const CHUNK = 100;

const chunks = <T>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

export async function submitJobPostings(
  store: CrawlStore,
  input: { keywordId: number; leaseToken: string; page: number; postings: PostingInput[] },
): Promise<SubmitResult> {
  // The same posting twice on one page counts once (the last copy wins).
  const distinct = [...new Map(input.postings.map((p) => [p.externalId, p])).values()];
  return store.withLease(input.keywordId, input.leaseToken, input.page, async (tx, { keyword, today, now }) => {
    const ids = await upsertPostings(tx, keyword.sourceId, distinct, now);
    // This page's sightings are replaced. Sightings of later pages that no page report counts (left
    // by a reset, or by a crawler that died between its submit and its report) go too.
    const beyond = Math.max(keyword.lastCompletedPage, input.page);
    await tx.execute(Prisma.sql`
      DELETE FROM "PostingSighting" WHERE "keywordId" = ${keyword.id} AND "crawlDate" = ${today}
         AND ("page" = ${input.page} OR "page" > ${beyond})`);
    for (const part of chunks([...ids.values()].map((v) => v.id))) {
      const rows = part.map((postingId) => Prisma.sql`(${keyword.id}, ${today}, ${input.page}, ${postingId}, ${now})`);
      await tx.execute(Prisma.sql`
        INSERT INTO "PostingSighting" ("keywordId", "crawlDate", "page", "postingId", "seenAt") VALUES ${Prisma.join(rows)}`);
    }
    const created = [...ids.values()].filter((v) => v.created).length;
    return { page: input.page, accepted: distinct.length, created };
  });
}

/**
 * Insert new postings, refresh known ones (lastSeenAt, details); returns id and novelty per externalId.
 * A known posting is written with its own id: an INSERT that leaves the id to its default takes a
 * value from PostgreSQL's sequence for every row it proposes, conflicting or not — the same postings
 * seen every day by many keywords would use up the 32-bit ids within weeks at scale, while few
 * postings are new. A posting that appears between the read and the write (a concurrent page of the
 * same source) still meets ON CONFLICT and is refreshed, at the cost of one sequence value.
 */
async function upsertPostings(tx: SqlTx, sourceId: string, postings: PostingInput[], now: Date) {
  const out = new Map<string, { id: number; created: boolean }>();
  const values = (p: PostingInput) =>
    Prisma.sql`${sourceId}, ${p.externalId}, ${p.title}, ${p.company ?? ""}, ${p.city ?? ""}, ${p.salary ?? ""}, ${p.url ?? ""}, ${p.publishedAt ?? null}, ${now}, ${now}`;
  const upsert = (columns: Prisma.Sql, rows: Prisma.Sql[]) =>
    tx.query<{ id: number; externalId: string }>(Prisma.sql`
      INSERT INTO "JobPosting" (${columns}"sourceId", "externalId", "title", "company", "city", "salary", "url", "publishedAt", "firstSeenAt", "lastSeenAt")
      VALUES ${Prisma.join(rows)}
      ON CONFLICT ("sourceId", "externalId") DO UPDATE SET
        "title" = excluded."title", "company" = excluded."company", "city" = excluded."city", "salary" = excluded."salary",
        "url" = excluded."url", "publishedAt" = COALESCE(excluded."publishedAt", "JobPosting"."publishedAt"),
        "lastSeenAt" = excluded."lastSeenAt"
      RETURNING "id", "externalId"`);
  for (const part of chunks(postings)) {
    const known = new Map(
      (
        await tx.query<{ id: number; externalId: string }>(Prisma.sql`
          SELECT "id", "externalId" FROM "JobPosting"
           WHERE "sourceId" = ${sourceId} AND "externalId" IN (${Prisma.join(part.map((p) => p.externalId))})`)
      ).map((r) => [r.externalId, Number(r.id)]),
    );
    const fresh = part.filter((p) => !known.has(p.externalId));
    const seen = part.filter((p) => known.has(p.externalId));
    const saved = [
      ...(seen.length ? await upsert(Prisma.sql`"id", `, seen.map((p) => Prisma.sql`(${known.get(p.externalId)!}, ${values(p)})`)) : []),
      ...(fresh.length ? await upsert(Prisma.empty, fresh.map((p) => Prisma.sql`(${values(p)})`)) : []),
    ];
    for (const r of saved) out.set(r.externalId, { id: Number(r.id), created: !known.has(r.externalId) });
  }
  return out;
}
