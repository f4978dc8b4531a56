// The state machine's SQL, one statement per function, for both databases. Raw statements rather
// than Prisma's query builder: the hot path (claim, page report) is a handful of statements per
// request, and a typed Prisma query costs far more than the statement itself. Column and enum
// names are constants from this file; every value is a bound parameter.
import { type Keyword, Prisma, type Source } from "../../../generated/sqlite/client.ts";
import { enumParam, type Provider, type SqlTx } from "../db/client.ts";
import type { CounterDelta } from "./counters.ts";
import type { CrawlStatus, KeywordPatch } from "./rules.ts";

const status = (provider: Provider, value: CrawlStatus) => enumParam(provider, "CrawlStatus", value);

const PATCHABLE = new Set<keyof KeywordPatch>([
  "status",
  "crawlDate",
  "lastRequestedAt",
  "lastCompletedPage",
  "totalPages",
  "jobsFound",
  "pagesCrawled",
  "crawlStartedAt",
  "heartbeatAt",
  "crawlerId",
  "errorMessage",
  "retryCount",
  "leaseToken",
]);

export interface LoadedKeyword {
  keyword: Keyword;
  source: Pick<Source, "id" | "maxPages" | "maxRetries" | "staleAfterSeconds">;
  /** jobsFound already recorded today for the page asked about, if any. */
  previousJobsOnPage: number | null;
}

/**
 * A keyword with its source's rules and (for a page report) what that page recorded today.
 * On PostgreSQL the keyword row is locked for the transaction, so concurrent events on one keyword
 * queue instead of all but one losing the compare-and-set; SQLite runs one write transaction at a
 * time anyway.
 */
export async function loadKeyword(tx: SqlTx, provider: Provider, keywordId: number, today: string, page: number | null, locked = false) {
  // Lock in a statement of its own: under READ COMMITTED a statement that waited for the lock
  // re-reads the locked row but not the rows joined to it, so the page report must be read after.
  // Without a page there is nothing joined that a lock wait could leave stale (the keyword row
  // itself is re-read, the source's rules do not depend on it): lock and read in one statement.
  const lockHere = provider === "postgres" && !locked && page === null;
  if (provider === "postgres" && !locked && !lockHere) await lockKeywords(tx, [keywordId]);
  const rows = await tx.query<Keyword & { s_maxPages: number; s_maxRetries: number; s_stale: number; p_jobs: number | null }>(Prisma.sql`
    SELECT k.*, s."maxPages" AS "s_maxPages", s."maxRetries" AS "s_maxRetries", s."staleAfterSeconds" AS "s_stale",
           p."jobsFound" AS "p_jobs"
      FROM "Keyword" k
      JOIN "Source" s ON s."id" = k."sourceId"
      LEFT JOIN "PageReport" p ON p."keywordId" = k."id" AND p."crawlDate" = ${today} AND p."page" = ${page ?? 0}
     WHERE k."id" = ${keywordId} ${lockHere ? Prisma.sql`FOR UPDATE OF k` : Prisma.empty}`);
  const row = rows[0];
  if (!row) return null;
  const { s_maxPages, s_maxRetries, s_stale, p_jobs, ...keyword } = row;
  return {
    keyword: keyword as Keyword,
    source: { id: keyword.sourceId, maxPages: s_maxPages, maxRetries: s_maxRetries, staleAfterSeconds: s_stale },
    previousJobsOnPage: p_jobs,
  } satisfies LoadedKeyword;
}

/**
 * PostgreSQL: lock keyword rows for the transaction, in id order (so two batches over the same
 * keywords queue instead of deadlocking). SQLite's single writer needs no lock.
 */
export async function lockKeywords(tx: SqlTx, ids: number[]) {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  await tx.query(Prisma.sql`SELECT 1 FROM "Keyword" WHERE "id" IN (${Prisma.join(sorted)}) ORDER BY "id" FOR UPDATE`);
}

/** Compare-and-set: writes `patch` only if the row still has `version`. Returns rows changed (0 or 1). */
export function updateKeyword(tx: SqlTx, provider: Provider, id: number, version: number, patch: KeywordPatch, now: Date) {
  return tx.execute(updateStatement(provider, id, version, patch, now));
}

function updateStatement(provider: Provider, id: number, version: number, patch: KeywordPatch, now: Date) {
  const sets = Object.entries(patch).map(([column, value]) => {
    if (!PATCHABLE.has(column as keyof KeywordPatch)) throw new Error(`not a crawl-state column: ${column}`);
    const v = column === "status" ? status(provider, value as CrawlStatus) : Prisma.sql`${value}`;
    return Prisma.sql`${Prisma.raw(`"${column}"`)} = ${v}`;
  });
  return Prisma.sql`
    UPDATE "Keyword" SET ${Prisma.join(sets)}, "version" = "version" + 1, "updatedAt" = ${now}
     WHERE "id" = ${id} AND "version" = ${version}`;
}

export interface KeywordWrite {
  id: number;
  version: number;
  patch: KeywordPatch;
  now: Date;
  pageReport?: { sourceId: string; crawlDate: string; page: number; jobsFound: number; crawlerId: string };
  event?: { sourceId: string; crawlDate: string; from: CrawlStatus; to: CrawlStatus; reason: string; crawlerId: string };
  /** Counter deltas (merged, sorted) to apply with it: only when this is the transaction's one keyword write. */
  counters?: { sourceId: string; deltas: CounterDelta[] };
}

/**
 * PostgreSQL: a keyword's compare-and-set, its page report, its event and (optionally) the
 * counters in ONE statement (data-modifying CTEs), one round trip instead of four. Everything
 * after the UPDATE is written only if the UPDATE matched (`FROM u`). Returns rows updated (0 or 1).
 */
export async function writeKeywordPostgres(tx: SqlTx, w: KeywordWrite): Promise<number> {
  const parts: Prisma.Sql[] = [Prisma.sql`u AS (${updateStatement("postgres", w.id, w.version, w.patch, w.now)} RETURNING "id")`];
  if (w.pageReport) {
    const r = w.pageReport;
    parts.push(Prisma.sql`p AS (
      INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
      SELECT u."id", ${r.sourceId}, ${r.crawlDate}, ${r.page}::int, ${r.jobsFound}::int, ${r.crawlerId}, ${w.now}::timestamp FROM u
      ON CONFLICT ("keywordId", "crawlDate", "page")
      DO UPDATE SET "jobsFound" = excluded."jobsFound", "crawlerId" = excluded."crawlerId", "reportedAt" = excluded."reportedAt")`);
  }
  if (w.event) {
    const e = w.event;
    parts.push(Prisma.sql`e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT u."id", ${e.sourceId}, ${e.crawlDate}, ${status("postgres", e.from)}, ${status("postgres", e.to)}, ${e.reason}, ${e.crawlerId},
             ${w.now}::timestamp FROM u)`);
  }
  if (w.counters?.deltas.length) {
    const rows = w.counters.deltas.map(
      (d) => Prisma.sql`(${d.crawlDate}, ${status("postgres", d.status)}, ${d.shard}::int, ${d.keywords}::int, ${d.jobsFound}::int, ${d.pagesCrawled}::int)`,
    );
    parts.push(Prisma.sql`c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT ${w.counters.sourceId}, v.* FROM (VALUES ${Prisma.join(rows)}) v WHERE EXISTS (SELECT 1 FROM u)
      ON CONFLICT ("sourceId", "crawlDate", "status", "shard") DO UPDATE SET
        "keywords" = "CrawlCounter"."keywords" + excluded."keywords",
        "jobsFound" = "CrawlCounter"."jobsFound" + excluded."jobsFound",
        "pagesCrawled" = "CrawlCounter"."pagesCrawled" + excluded."pagesCrawled")`);
  }
  const [row] = await tx.query<{ n: number }>(Prisma.sql`WITH ${Prisma.join(parts)} SELECT count(*)::int AS "n" FROM u`);
  return row!.n;
}

/** Record a page of a crawl day; a repeat of the page replaces its count (counted once). */
export function upsertPageReport(
  tx: SqlTx,
  r: { keywordId: number; sourceId: string; crawlDate: string; page: number; jobsFound: number; crawlerId: string; at: Date },
) {
  return tx.execute(Prisma.sql`
    INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
    VALUES (${r.keywordId}, ${r.sourceId}, ${r.crawlDate}, ${r.page}, ${r.jobsFound}, ${r.crawlerId}, ${r.at})
    ON CONFLICT ("keywordId", "crawlDate", "page")
    DO UPDATE SET "jobsFound" = ${r.jobsFound}, "crawlerId" = ${r.crawlerId}, "reportedAt" = ${r.at}`);
}

export function deletePageReports(tx: SqlTx, keywordId: number, crawlDate: string) {
  return tx.execute(Prisma.sql`DELETE FROM "PageReport" WHERE "keywordId" = ${keywordId} AND "crawlDate" = ${crawlDate}`);
}

export function insertEvent(
  tx: SqlTx,
  provider: Provider,
  e: { keywordId: number; sourceId: string; crawlDate: string; from: CrawlStatus; to: CrawlStatus; reason: string; crawlerId: string; at: Date },
) {
  return tx.execute(Prisma.sql`
    INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
    VALUES (${e.keywordId}, ${e.sourceId}, ${e.crawlDate}, ${status(provider, e.from)}, ${status(provider, e.to)},
            ${e.reason}, ${e.crawlerId}, ${e.at})`);
}

export async function loadSource(tx: SqlTx, id: string): Promise<Source | null> {
  const rows = await tx.query<Source>(Prisma.sql`SELECT * FROM "Source" WHERE "id" = ${id}`);
  const s = rows[0];
  return s ? { ...s, enabled: Boolean(s.enabled) } : null;
}

/** Move today's counters (see counters.ts); `deltas` come merged and sorted. */
export function addToCounters(tx: SqlTx, provider: Provider, sourceId: string, deltas: CounterDelta[]) {
  if (!deltas.length) return Promise.resolve(0);
  const rows = deltas.map(
    (d) => Prisma.sql`(${sourceId}, ${d.crawlDate}, ${status(provider, d.status)}, ${d.shard}, ${d.keywords}, ${d.jobsFound}, ${d.pagesCrawled})`,
  );
  return tx.execute(Prisma.sql`
    INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
    VALUES ${Prisma.join(rows)}
    ON CONFLICT ("sourceId", "crawlDate", "status", "shard") DO UPDATE SET
      "keywords" = "CrawlCounter"."keywords" + excluded."keywords",
      "jobsFound" = "CrawlCounter"."jobsFound" + excluded."jobsFound",
      "pagesCrawled" = "CrawlCounter"."pagesCrawled" + excluded."pagesCrawled"`);
}

/**
 * The claim's priority order: resume, then retry, then fresh — never requested first, then least
 * recently requested. Each pick is one index range read in index order (no sort, on either
 * database); the fresh ones split in two because an `IS NULL OR <` filter is not one range.
 */
export const CLAIM_ORDER = ["PARTIAL", "FAILED", "NEVER_REQUESTED", "REQUESTED_BEFORE_TODAY"] as const;
export type ClaimPick = (typeof CLAIM_ORDER)[number];

function candidateQuery(pick: ClaimPick, source: Source, today: string, todayStart: Date) {
  switch (pick) {
    case "PARTIAL":
      // index (sourceId, status, crawlDate, lastRequestedAt, id)
      return {
        where: Prisma.sql`"sourceId" = ${source.id} AND "status" = 'PARTIAL' AND "crawlDate" = ${today}`,
        order: Prisma.sql`"lastRequestedAt" ASC, "id" ASC`,
      };
    case "FAILED":
      return {
        where: Prisma.sql`"sourceId" = ${source.id} AND "status" = 'FAILED' AND "crawlDate" = ${today} AND "retryCount" < ${source.maxRetries}`,
        order: Prisma.sql`"lastRequestedAt" ASC, "id" ASC`,
      };
    case "NEVER_REQUESTED":
      // index (sourceId, lastRequestedAt, id): the NULL entries, in id (import) order
      return {
        where: Prisma.sql`"sourceId" = ${source.id} AND "lastRequestedAt" IS NULL AND ("crawlDate" IS NULL OR "crawlDate" <> ${today})`,
        order: Prisma.sql`"id" ASC`,
      };
    case "REQUESTED_BEFORE_TODAY":
      // Same index. Whatever was claimed today was requested today, so the range ends at today's
      // first request instead of walking every keyword claimed today.
      return {
        where: Prisma.sql`"sourceId" = ${source.id} AND "lastRequestedAt" < ${todayStart} AND ("crawlDate" IS NULL OR "crawlDate" <> ${today})`,
        order: Prisma.sql`"lastRequestedAt" ASC, "id" ASC`,
      };
  }
}

/**
 * Candidates for a claim, in priority order. On PostgreSQL the rows are locked with SKIP LOCKED:
 * concurrent claimers each take different rows instead of queueing on the same first one.
 * SQLite's single writer makes a plain read exclusive.
 */
export function claimCandidates(
  tx: SqlTx,
  provider: Provider,
  source: Source,
  day: { today: string; todayStart: Date },
  pick: ClaimPick,
  take: number,
  skip: number[],
) {
  const q = candidateQuery(pick, source, day.today, day.todayStart);
  const notIn = skip.length ? Prisma.sql`AND "id" NOT IN (${Prisma.join(skip)})` : Prisma.empty;
  const lock = provider === "postgres" ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.empty;
  return tx.query<Keyword>(Prisma.sql`
    SELECT * FROM "Keyword" WHERE ${q.where} ${notIn} ORDER BY ${q.order} LIMIT ${take} ${lock}`);
}

/**
 * PostgreSQL: the candidates of every pick in one statement (one round trip instead of four),
 * each pick its own index range read with SKIP LOCKED, then the first `take` in priority order.
 * A pick may lock up to `take` rows it does not return; they are released at commit.
 */
export async function claimCandidatesAllPostgres(
  tx: SqlTx,
  source: Source,
  day: { today: string; todayStart: Date },
  take: number,
  skip: number[],
) {
  const notIn = skip.length ? Prisma.sql`AND "id" NOT IN (${Prisma.join(skip)})` : Prisma.empty;
  const picks = CLAIM_ORDER.map((pick, i) => {
    const q = candidateQuery(pick, source, day.today, day.todayStart);
    return Prisma.sql`${Prisma.raw(`p${i}`)} AS (
      SELECT *, ${Prisma.raw(String(i))} AS "pick" FROM "Keyword" WHERE ${q.where} ${notIn} ORDER BY ${q.order} LIMIT ${take} FOR UPDATE SKIP LOCKED)`;
  });
  const all = Prisma.raw(CLAIM_ORDER.map((_, i) => `SELECT * FROM p${i}`).join(" UNION ALL "));
  const rows = await tx.query<Keyword & { pick: number }>(Prisma.sql`WITH ${Prisma.join(picks)} ${all}`);
  // UNION ALL of materialised CTEs keeps each pick's order; a stable sort by pick makes sure.
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.pick - b.r.pick || a.i - b.i)
    .slice(0, take)
    .map(({ r: { pick: _pick, ...kw } }) => kw as Keyword);
}
