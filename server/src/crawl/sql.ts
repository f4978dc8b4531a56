// The state machine's SQL, one statement per function, for both databases. Raw statements rather
// than Prisma's query builder: the hot path (claim, page report) is a handful of statements per
// request, and a typed Prisma query costs far more than the statement itself. Column and enum
// names are constants from this file; every value is a bound parameter.
import { type Keyword, Prisma, type Source } from "../../../generated/sqlite/client.ts";
import { enumParam, type Provider, type SqlTx } from "../db/client.ts";
import { type CounterDelta, counterShard } from "./counters.ts";
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
 * Several keywords (with, per item, what its page recorded today) in one statement, without locks;
 * `out[i]` answers `items[i]` (undefined: no such keyword).
 */
export async function loadKeywords(tx: SqlTx, provider: Provider, items: { id: number; page: number | null }[], today: string) {
  const input =
    provider === "postgres"
      ? Prisma.sql`unnest(${items.map((x) => x.id)}::int[], ${items.map((x) => x.page ?? 0)}::int[]) WITH ORDINALITY AS i ("id", "page", "i")`
      : Prisma.sql`(SELECT j.value ->> 0 AS "id", j.value ->> 1 AS "page", j.key + 1 AS "i"
                      FROM json_each(${JSON.stringify(items.map((x) => [x.id, x.page ?? 0]))}) j) AS i`;
  const rows = await tx.query<Keyword & { s_maxPages: number; s_maxRetries: number; s_stale: number; p_jobs: number | null; i: number }>(Prisma.sql`
    SELECT k.*, s."maxPages" AS "s_maxPages", s."maxRetries" AS "s_maxRetries", s."staleAfterSeconds" AS "s_stale",
           p."jobsFound" AS "p_jobs", ${provider === "postgres" ? Prisma.sql`i."i"::int` : Prisma.sql`i."i"`} AS "i"
      FROM ${input}
      JOIN "Keyword" k ON k."id" = i."id"
      JOIN "Source" s ON s."id" = k."sourceId"
      LEFT JOIN "PageReport" p ON p."keywordId" = k."id" AND p."crawlDate" = ${today} AND p."page" = i."page"`);
  const out: (LoadedKeyword | undefined)[] = new Array(items.length);
  for (const { s_maxPages, s_maxRetries, s_stale, p_jobs, i, ...keyword } of rows) {
    out[Number(i) - 1] = {
      keyword: keyword as Keyword,
      source: { id: keyword.sourceId, maxPages: s_maxPages, maxRetries: s_maxRetries, staleAfterSeconds: s_stale },
      previousJobsOnPage: p_jobs,
    };
  }
  return out;
}

/**
 * PostgreSQL: lock keyword rows for the transaction, in id order (so two batches over the same
 * keywords queue instead of deadlocking). SQLite's single writer needs no lock.
 */
export async function lockKeywords(tx: SqlTx, ids: number[]) {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  await tx.query(Prisma.sql`SELECT 1 FROM "Keyword" WHERE "id" IN (${Prisma.join(sorted)}) ORDER BY "id" FOR UPDATE`);
}

/**
 * PostgreSQL: the items of a statement that writes several as a relation `(columns…, "i")`, "i"
 * numbering them from 1. One item is a row of scalars — the planner then knows it is one row, so
 * the prepared statement settles on its generic plan and is not planned again at every execution
 * (as it is for `unnest` of arrays, whose length it cannot know in advance). Timestamps are given
 * as ISO strings.
 */
function itemRows(columns: [name: string, type: string, values: unknown[]][]): Prisma.Sql {
  if (columns[0]![2].length === 1) {
    return Prisma.sql`SELECT ${Prisma.join(columns.map(([name, type, [value]]) => Prisma.sql`${value}::${Prisma.raw(`${type} AS "${name}"`)}`))}, 1 AS "i"`;
  }
  return Prisma.sql`SELECT * FROM unnest(${Prisma.join(columns.map(([, type, values]) => Prisma.sql`${values}::${Prisma.raw(`${type}[]`)}`))})
        WITH ORDINALITY AS v (${Prisma.raw(columns.map(([name]) => `"${name}"`).join(", "))}, "i")`;
}

/** `"column" = value, …` of a patch, crawl-state columns only. */
function setClauses(provider: Provider, patch: KeywordPatch) {
  return Prisma.join(
    Object.entries(patch).map(([column, value]) => {
      if (!PATCHABLE.has(column as keyof KeywordPatch)) throw new Error(`not a crawl-state column: ${column}`);
      const v = column === "status" ? status(provider, value as CrawlStatus) : Prisma.sql`${value}`;
      return Prisma.sql`${Prisma.raw(`"${column}"`)} = ${v}`;
    }),
  );
}

/** A page report under a live lease (writeProgressPostgres). */
export interface LeasedProgress {
  id: number;
  leaseToken: string;
  page: number;
  /** 0: not known from this page. */
  totalPages: number;
  jobs: number;
}

/**
 * PostgreSQL: page reports on keywords CRAWLING today under their `leaseToken`, in ONE statement —
 * the PROGRESS rule of rules.ts decide() written in SQL for that state (the read path's decide()
 * stays the reference; server/test/progress-rules.test.ts checks they agree): each keyword's counts
 * (a page reported again replaces its jobs), COMPLETED at the source's last page, the page report,
 * the event and the day's counters. Input checks that need no row are the caller's (decide() on a
 * probe state). Each keyword is read and written under its version, and every page report of a
 * keyword bumps that version, so the page report read beside it cannot be stale. `out[i]` answers
 * `reports[i]`: the keyword after, or null when it is not so leased, the page is beyond maxPages
 * or a concurrent write got there first (the caller reads and decides) — each report on its own,
 * the others are written. A keyword must appear once (a second report of it would be lost).
 */
export async function writeProgressPostgres(tx: SqlTx, reports: LeasedProgress[], at: { now: Date; today: string }): Promise<(Keyword | null)[]> {
  if (new Set(reports.map((r) => r.id)).size !== reports.length) throw new Error("a keyword reported twice in one statement");
  const crawling = status("postgres", "CRAWLING" as CrawlStatus);
  const completed = status("postgres", "COMPLETED" as CrawlStatus);
  const rows = await tx.query<Keyword & { o_jobs: number; o_pages: number; v_i: number; v_page: number; v_jobs: number }>(Prisma.sql`
    WITH v AS (${itemRows([
      ["id", "int", reports.map((r) => r.id)],
      ["token", "text", reports.map((r) => r.leaseToken)],
      ["page", "int", reports.map((r) => r.page)],
      ["total", "int", reports.map((r) => r.totalPages)],
      ["jobs", "int", reports.map((r) => r.jobs)],
    ])}),
    cur AS (
      SELECT k."id", k."version", v."i", v."page", v."jobs", s."maxPages", p."jobsFound" AS "prev",
             CASE WHEN v."total" > 0 THEN v."total" ELSE k."totalPages" END AS "known",
             GREATEST(k."lastCompletedPage", v."page") AS "lcp"
        FROM v
        JOIN "Keyword" k ON k."id" = v."id"
        JOIN "Source" s ON s."id" = k."sourceId"
        LEFT JOIN "PageReport" p ON p."keywordId" = k."id" AND p."crawlDate" = ${at.today} AND p."page" = v."page"
        -- the lease, written so that no index serves it: each keyword by its id
       WHERE (k."leaseToken" = v."token" AND k."status" = 'CRAWLING' AND k."crawlDate" = ${at.today}) IS TRUE
         AND v."page" <= s."maxPages"),
    u AS (
      UPDATE "Keyword" k SET
        "lastCompletedPage" = c."lcp",
        "totalPages" = c."known",
        "jobsFound" = k."jobsFound" - COALESCE(c."prev", 0) + c."jobs",
        "pagesCrawled" = k."pagesCrawled" + CASE WHEN c."prev" IS NULL THEN 1 ELSE 0 END,
        "heartbeatAt" = ${at.now}::timestamp,
        "status" = CASE WHEN c."lcp" >= CASE WHEN c."known" > 0 THEN LEAST(c."known", c."maxPages") ELSE c."maxPages" END
                        THEN ${completed} ELSE ${crawling} END,
        "version" = k."version" + 1, "updatedAt" = ${at.now}::timestamp
        FROM cur c WHERE k."id" = c."id" AND k."version" = c."version"
      RETURNING k.*, k."jobsFound" + COALESCE(c."prev", 0) - c."jobs" AS "o_jobs",
                k."pagesCrawled" - CASE WHEN c."prev" IS NULL THEN 1 ELSE 0 END AS "o_pages",
                c."i"::int AS "v_i", c."page" AS "v_page", c."jobs" AS "v_jobs"),
    p AS (
      INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
      SELECT u."id", u."sourceId", ${at.today}, u."v_page", u."v_jobs", u."crawlerId", ${at.now}::timestamp FROM u ORDER BY u."v_i"
      ON CONFLICT ("keywordId", "crawlDate", "page")
      DO UPDATE SET "jobsFound" = excluded."jobsFound", "crawlerId" = excluded."crawlerId", "reportedAt" = excluded."reportedAt"),
    e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT u."id", u."sourceId", ${at.today}, ${crawling}, u."status", 'last page', u."crawlerId", ${at.now}::timestamp
        FROM u WHERE u."status" = ${completed} ORDER BY u."v_i"),
    c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT u."sourceId", ${at.today}, d."status", ${counterShard()}::int, sum(d."k")::int, sum(d."j")::int, sum(d."p")::int
        FROM u CROSS JOIN LATERAL (VALUES (${crawling}, -1, -u."o_jobs", -u."o_pages"), (u."status", 1, u."jobsFound", u."pagesCrawled"))
             AS d ("status", "k", "j", "p")
       GROUP BY u."sourceId", d."status"
      HAVING sum(d."k") <> 0 OR sum(d."j") <> 0 OR sum(d."p") <> 0
       -- counter rows locked in one order by every statement, so two never wait on each other
       ORDER BY u."sourceId" COLLATE "C", d."status"::text COLLATE "C"
      ${COUNTER_UPSERT})
    SELECT * FROM u`);
  const out: (Keyword | null)[] = reports.map(() => null);
  for (const { o_jobs: _j, o_pages: _p, v_i, v_page: _pg, v_jobs: _jb, ...keyword } of rows) {
    out[v_i - 1] = keyword as Keyword;
  }
  return out;
}

/**
 * An event on a leased keyword written without reading it first (writeLeasedManyPostgres,
 * updateLeasedSqlite): the WHERE is the lease (CRAWLING today, this token), the patch was decided on
 * that state and reads nothing else of the row (store.ts checks).
 */
export interface LeasedWrite {
  id: number;
  leaseToken: string;
  patch: KeywordPatch;
  to: CrawlStatus;
  reason: string;
}

/** Leased batch writes patch only status, heartbeatAt and errorMessage (store.ts writesBlind). */
function assertBlind(writes: LeasedWrite[]) {
  for (const w of writes) {
    for (const c of Object.keys(w.patch)) if (c !== "status" && c !== "heartbeatAt" && c !== "errorMessage") throw new Error(`not blind: ${c}`);
  }
}

/**
 * PostgreSQL: leased writes (LeasedWrite) in ONE statement, of independent requests: an item whose
 * lease does not hold is left out and answered null, the others are written; a keyword must appear
 * once. Events and the day's counters follow from the rows the UPDATE returns. Only status,
 * heartbeatAt and errorMessage may be patched (the blind columns). `out[i]` answers `writes[i]`.
 */
export async function writeLeasedManyPostgres(tx: SqlTx, writes: LeasedWrite[], at: { now: Date; today: string }): Promise<(Keyword | null)[]> {
  assertBlind(writes);
  if (new Set(writes.map((w) => w.id)).size !== writes.length) throw new Error("a keyword written twice in one statement");
  const crawling = status("postgres", "CRAWLING" as CrawlStatus);
  const has = (w: LeasedWrite, c: keyof KeywordPatch) => Object.hasOwn(w.patch, c);
  const rows = await tx.query<Keyword & { v_i: number; v_reason: string }>(Prisma.sql`
    WITH v AS (${itemRows([
      ["id", "int", writes.map((w) => w.id)],
      ["token", "text", writes.map((w) => w.leaseToken)],
      ["to", '"CrawlStatus"', writes.map((w) => w.to)],
      ["reason", "text", writes.map((w) => w.reason)],
      ["h_set", "boolean", writes.map((w) => has(w, "heartbeatAt"))],
      ["h", "timestamp", timestamps(writes.map((w) => w.patch.heartbeatAt ?? null))],
      ["e_set", "boolean", writes.map((w) => has(w, "errorMessage"))],
      ["e", "text", writes.map((w) => w.patch.errorMessage ?? null)],
    ])}),
    u AS (
      UPDATE "Keyword" k SET "status" = v."to",
        "heartbeatAt" = CASE WHEN v."h_set" THEN v."h" ELSE k."heartbeatAt" END,
        "errorMessage" = CASE WHEN v."e_set" THEN v."e" ELSE k."errorMessage" END,
        "version" = k."version" + 1, "updatedAt" = ${at.now}::timestamp
      FROM v WHERE k."id" = v."id" AND k."leaseToken" = v."token"
        -- the lease's other conditions, written so that no index serves them: each row by its id
        AND (k."status" = 'CRAWLING' AND k."crawlDate" = ${at.today}) IS TRUE
      RETURNING k.*, v."reason" AS "v_reason", v."i"::int AS "v_i"),
    e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT u."id", u."sourceId", ${at.today}, ${crawling}, u."status", u."v_reason", u."crawlerId", ${at.now}::timestamp
        FROM u WHERE u."status" <> ${crawling}
       ORDER BY u."v_i"),
    c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT u."sourceId", ${at.today}, d."status", ${counterShard()}::int, sum(d."k"), sum(d."j"), sum(d."p")
        FROM u CROSS JOIN LATERAL (VALUES (${crawling}, -1, -u."jobsFound", -u."pagesCrawled"), (u."status", 1, u."jobsFound", u."pagesCrawled"))
             AS d ("status", "k", "j", "p")
       WHERE u."status" <> ${crawling}
       GROUP BY u."sourceId", d."status"
       ORDER BY u."sourceId" COLLATE "C", d."status"::text COLLATE "C"
      ${COUNTER_UPSERT})
    SELECT * FROM u`);
  const out: (Keyword | null)[] = writes.map(() => null);
  for (const { v_i, v_reason: _r, ...k } of rows) out[v_i - 1] = k as Keyword;
  return out;
}

/** One keyword's write: its full state after the event, guarded by the version it was read at. */
export interface KeywordWrite {
  before: Pick<Keyword, "id" | "version" | "sourceId">;
  after: Keyword;
  /** Who the page report and the event are recorded for. */
  crawlerId: string;
  pageReport?: { page: number; jobsFound: number };
  event?: { from: CrawlStatus; to: CrawlStatus; reason: string };
  /** Forget the keyword's page reports of `today` (RESET). */
  dropPageReports?: boolean;
}

const COUNTER_UPSERT = Prisma.raw(`ON CONFLICT ("sourceId", "crawlDate", "status", "shard") DO UPDATE SET
        "keywords" = "CrawlCounter"."keywords" + excluded."keywords",
        "jobsFound" = "CrawlCounter"."jobsFound" + excluded."jobsFound",
        "pagesCrawled" = "CrawlCounter"."pagesCrawled" + excluded."pagesCrawled"`);

const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** Strings of Dates (or null) for a `timestamp[]` parameter. */
const timestamps = (values: (Date | null)[]) => values.map((d) => (d ? d.toISOString() : null));

/**
 * PostgreSQL: any number of keyword writes — compare-and-set of each row's full crawl state, page
 * reports, events, dropped page reports and the counters — in ONE statement (data-modifying CTEs
 * over array parameters, so the statement text is the same for every batch size and is prepared
 * once). The main query runs the UPDATE first (keyword rows are always locked before page reports
 * and counters, as in a transaction); the other parts write only for rows it matched, and the
 * counters, computed for the whole batch, only when every row matched.
 *
 * `strict` (a statement that commits by itself): when any row lost its compare-and-set the
 * statement fails with division_by_zero (22012) and writes nothing — see isCasFailure(). Otherwise
 * (inside a transaction, rows locked) it returns how many rows matched and the caller decides.
 */
export async function writeKeywordsPostgres(
  tx: SqlTx,
  writes: KeywordWrite[],
  counters: { sourceId: string; deltas: CounterDelta[] }[],
  at: { now: Date; today: string },
  strict: boolean,
): Promise<number> {
  const a = writes.map((w) => w.after);
  const reports = writes.filter((w) => w.pageReport);
  const events = writes.filter((w) => w.event);
  const drops = writes.filter((w) => w.dropPageReports).map((w) => w.before.id);
  // One lock order for counter rows in every statement (see mergeDeltas), across sources too.
  const deltas = counters
    .flatMap((c) => c.deltas.map((d) => ({ sourceId: c.sourceId, ...d })))
    .sort((x, y) => cmp(x.sourceId, y.sourceId) || cmp(x.crawlDate, y.crawlDate) || cmp(x.status, y.status) || x.shard - y.shard);
  const [row] = await tx.query<{ n: number }>(Prisma.sql`
    WITH v AS (
      SELECT * FROM unnest(${writes.map((w) => w.before.id)}::int[], ${writes.map((w) => w.before.version)}::int[],
        ${a.map((k) => k.status)}::"CrawlStatus"[], ${a.map((k) => k.crawlDate)}::text[], ${timestamps(a.map((k) => k.lastRequestedAt))}::timestamp[],
        ${a.map((k) => k.lastCompletedPage)}::int[], ${a.map((k) => k.totalPages)}::int[], ${a.map((k) => k.jobsFound)}::int[],
        ${a.map((k) => k.pagesCrawled)}::int[], ${timestamps(a.map((k) => k.crawlStartedAt))}::timestamp[],
        ${timestamps(a.map((k) => k.heartbeatAt))}::timestamp[], ${a.map((k) => k.crawlerId)}::text[], ${a.map((k) => k.errorMessage)}::text[],
        ${a.map((k) => k.retryCount)}::int[], ${a.map((k) => k.leaseToken)}::text[])
      AS v ("id", "version", "status", "crawlDate", "lastRequestedAt", "lastCompletedPage", "totalPages", "jobsFound", "pagesCrawled",
            "crawlStartedAt", "heartbeatAt", "crawlerId", "errorMessage", "retryCount", "leaseToken")),
    u AS (
      UPDATE "Keyword" k SET "status" = v."status", "crawlDate" = v."crawlDate", "lastRequestedAt" = v."lastRequestedAt",
        "lastCompletedPage" = v."lastCompletedPage", "totalPages" = v."totalPages", "jobsFound" = v."jobsFound",
        "pagesCrawled" = v."pagesCrawled", "crawlStartedAt" = v."crawlStartedAt", "heartbeatAt" = v."heartbeatAt",
        "crawlerId" = v."crawlerId", "errorMessage" = v."errorMessage", "retryCount" = v."retryCount", "leaseToken" = v."leaseToken",
        "version" = k."version" + 1, "updatedAt" = ${at.now}::timestamp
      FROM v WHERE k."id" = v."id" AND k."version" = v."version"
      RETURNING k."id"),
    n AS (SELECT count(*)::int AS "n" FROM u),
    p AS (
      INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
      SELECT r."id", r."sourceId", ${at.today}, r."page", r."jobs", r."crawlerId", ${at.now}::timestamp
        FROM unnest(${reports.map((w) => w.before.id)}::int[], ${reports.map((w) => w.before.sourceId)}::text[],
                    ${reports.map((w) => w.pageReport!.page)}::int[], ${reports.map((w) => w.pageReport!.jobsFound)}::int[],
                    ${reports.map((w) => w.crawlerId)}::text[]) AS r ("id", "sourceId", "page", "jobs", "crawlerId")
        JOIN u ON u."id" = r."id"
      ON CONFLICT ("keywordId", "crawlDate", "page")
      DO UPDATE SET "jobsFound" = excluded."jobsFound", "crawlerId" = excluded."crawlerId", "reportedAt" = excluded."reportedAt"),
    d AS (
      DELETE FROM "PageReport" WHERE "crawlDate" = ${at.today} AND "keywordId" IN (SELECT u."id" FROM u WHERE u."id" = ANY(${drops}::int[]))),
    e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT r."id", r."sourceId", ${at.today}, r."from", r."to", r."reason", r."crawlerId", ${at.now}::timestamp
        FROM unnest(${events.map((w) => w.before.id)}::int[], ${events.map((w) => w.before.sourceId)}::text[],
                    ${events.map((w) => w.event!.from)}::"CrawlStatus"[], ${events.map((w) => w.event!.to)}::"CrawlStatus"[],
                    ${events.map((w) => w.event!.reason)}::text[], ${events.map((w) => w.crawlerId)}::text[])
             WITH ORDINALITY AS r ("id", "sourceId", "from", "to", "reason", "crawlerId", "i")
        JOIN u ON u."id" = r."id"
       ORDER BY r."i"),
    c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT r."sourceId", r."crawlDate", r."status", r."shard", r."keywords", r."jobsFound", r."pagesCrawled"
        FROM unnest(${deltas.map((x) => x.sourceId)}::text[], ${deltas.map((x) => x.crawlDate)}::text[],
                    ${deltas.map((x) => x.status)}::"CrawlStatus"[], ${deltas.map((x) => x.shard)}::int[],
                    ${deltas.map((x) => x.keywords)}::int[], ${deltas.map((x) => x.jobsFound)}::int[],
                    ${deltas.map((x) => x.pagesCrawled)}::int[])
             WITH ORDINALITY AS r ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled", "i")
       WHERE (SELECT "n" FROM n) = ${writes.length}::int
       ORDER BY r."i"
      ${COUNTER_UPSERT})
    SELECT CASE WHEN ${strict}::boolean AND "n" <> ${writes.length}::int THEN 1 / ("n" - "n") ELSE "n" END AS "n" FROM n`);
  return row!.n;
}

/**
 * PostgreSQL: ONE keyword's write in one statement, lighter than writeKeywordsPostgres for a single
 * row (only the patched columns, no arrays): its compare-and-set, page report, event and counters.
 * Everything after the UPDATE is written only if the UPDATE matched, and the main query reads the
 * UPDATE first (keyword row locked before page report and counters). Returns rows updated (0 or 1).
 * Not for RESET (dropped page reports): writeKeywordsPostgres does that.
 */
export async function writeKeywordPostgres(
  tx: SqlTx,
  w: KeywordWrite & { patch: KeywordPatch },
  counters: { sourceId: string; deltas: CounterDelta[] } | null,
  at: { now: Date; today: string },
): Promise<number> {
  if (w.dropPageReports) throw new Error("writeKeywordPostgres cannot drop page reports");
  const parts: Prisma.Sql[] = [
    Prisma.sql`u AS (
      UPDATE "Keyword" SET ${setClauses("postgres", w.patch)}, "version" = "version" + 1, "updatedAt" = ${at.now}::timestamp
       WHERE "id" = ${w.before.id} AND "version" = ${w.before.version} RETURNING "id")`,
  ];
  if (w.pageReport) {
    parts.push(Prisma.sql`p AS (
      INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
      SELECT u."id", ${w.before.sourceId}, ${at.today}, ${w.pageReport.page}::int, ${w.pageReport.jobsFound}::int, ${w.crawlerId}, ${at.now}::timestamp FROM u
      ON CONFLICT ("keywordId", "crawlDate", "page")
      DO UPDATE SET "jobsFound" = excluded."jobsFound", "crawlerId" = excluded."crawlerId", "reportedAt" = excluded."reportedAt")`);
  }
  if (w.event) {
    parts.push(Prisma.sql`e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT u."id", ${w.before.sourceId}, ${at.today}, ${status("postgres", w.event.from)}, ${status("postgres", w.event.to)}, ${w.event.reason},
             ${w.crawlerId}, ${at.now}::timestamp FROM u)`);
  }
  if (counters?.deltas.length) {
    const rows = counters.deltas.map(
      (d) => Prisma.sql`(${d.crawlDate}, ${status("postgres", d.status)}, ${d.shard}::int, ${d.keywords}::int, ${d.jobsFound}::int, ${d.pagesCrawled}::int)`,
    );
    parts.push(Prisma.sql`c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT ${counters.sourceId}, v.* FROM (VALUES ${Prisma.join(rows)}) v WHERE EXISTS (SELECT 1 FROM u)
      ${COUNTER_UPSERT})`);
  }
  const [row] = await tx.query<{ n: number }>(Prisma.sql`WITH ${Prisma.join(parts)} SELECT count(*)::int AS "n" FROM u`);
  return row!.n;
}

/** The error writeKeywordsPostgres(strict) raises when a row lost its compare-and-set. */
export const isCasFailure = (e: unknown) => (e as { code?: string }).code === "22012";

/** SQLite's text form of a DateTime, as Prisma stores it (ISO-8601 with an explicit offset). */
const sqliteTime = (d: Date | null) => (d ? d.toISOString().replace("Z", "+00:00") : null);
/** A crawl-state value as SQLite stores it (dates as Prisma's text). */
const sqliteColumn = (v: unknown) => (v instanceof Date ? sqliteTime(v) : v === undefined ? null : v);

/**
 * SQLite: any number of keyword writes in a few statements — the compare-and-set of the patched
 * columns (one statement per kind of patch), the page reports, the events, the dropped page
 * reports — each over a JSON array parameter (json_each), so one statement text serves every batch
 * size. Runs inside the writer's transaction. Returns how many rows matched their version.
 */
export async function writeKeywordsSqlite(
  tx: SqlTx,
  writes: (KeywordWrite & { patch: KeywordPatch })[],
  at: { now: Date; today: string },
): Promise<number> {
  const now = sqliteTime(at.now);
  // SQLite rewrites the entries of every index over a column the SET list names, changed or not: so
  // each write sets only what its decision patched, one statement per set of patched columns.
  const groups = new Map<string, { columns: (keyof KeywordPatch)[]; rows: unknown[][] }>();
  for (const w of writes) {
    const columns = (Object.keys(w.patch) as (keyof KeywordPatch)[]).sort();
    const key = columns.join();
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { columns, rows: [] }));
    g.rows.push([w.before.id, w.before.version, ...columns.map((c) => sqliteColumn(w.after[c]))]);
  }
  let matched = 0;
  for (const { columns, rows } of groups.values()) {
    for (const c of columns) if (!PATCHABLE.has(c)) throw new Error(`not a crawl-state column: ${c}`);
    const set = columns.map((c) => `"${c}" = v."${c}"`).join(", ");
    const values = columns.map((c, i) => `j.value ->> ${i + 2} AS "${c}"`).join(", ");
    matched += await tx.execute(Prisma.sql`
      UPDATE "Keyword" AS k SET ${Prisma.raw(set)}, "version" = k."version" + 1, "updatedAt" = ${now}
      FROM (SELECT j.value ->> 0 AS "id", j.value ->> 1 AS "version", ${Prisma.raw(values)}
              FROM json_each(${JSON.stringify(rows)}) j) AS v
      WHERE k."id" = v."id" AND k."version" = v."version"`);
  }
  await writeEffectsSqlite(tx, writes, at);
  return matched;
}

/** SQLite: what keyword writes record beside the keyword rows — page reports, dropped page reports, events. */
export async function writeEffectsSqlite(tx: SqlTx, writes: KeywordWrite[], at: { now: Date; today: string }) {
  const now = sqliteTime(at.now);
  const reports = writes.filter((w) => w.pageReport).map((w) => [w.before.id, w.before.sourceId, w.pageReport!.page, w.pageReport!.jobsFound, w.crawlerId]);
  if (reports.length) {
    await tx.execute(Prisma.sql`
      INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", "page", "jobsFound", "crawlerId", "reportedAt")
      SELECT j.value ->> 0, j.value ->> 1, ${at.today}, j.value ->> 2, j.value ->> 3, j.value ->> 4, ${now}
        FROM json_each(${JSON.stringify(reports)}) j WHERE true
      ON CONFLICT ("keywordId", "crawlDate", "page")
      DO UPDATE SET "jobsFound" = excluded."jobsFound", "crawlerId" = excluded."crawlerId", "reportedAt" = excluded."reportedAt"`);
  }
  const drops = writes.filter((w) => w.dropPageReports).map((w) => w.before.id);
  if (drops.length) {
    await tx.execute(Prisma.sql`
      DELETE FROM "PageReport" WHERE "crawlDate" = ${at.today} AND "keywordId" IN (SELECT j.value FROM json_each(${JSON.stringify(drops)}) j)`);
  }
  const events = writes.filter((w) => w.event).map((w) => [w.before.id, w.before.sourceId, w.event!.from, w.event!.to, w.event!.reason, w.crawlerId]);
  if (events.length) {
    await tx.execute(Prisma.sql`
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT j.value ->> 0, j.value ->> 1, ${at.today}, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, ${now}
        FROM json_each(${JSON.stringify(events)}) j ORDER BY j.key`);
  }
}

/**
 * SQLite: writeLeasedManyPostgres's UPDATE, inside the writer's transaction: the blind patch of
 * every keyword that is CRAWLING today under its item's token. Returns the rows it changed (in no
 * particular order); the caller rolls back unless that is every item.
 */
export async function updateLeasedSqlite(tx: SqlTx, writes: LeasedWrite[], at: { now: Date; today: string }): Promise<Keyword[]> {
  const rows = writes.map((w) => [
    w.id, w.leaseToken, w.to,
    Object.hasOwn(w.patch, "heartbeatAt"), sqliteColumn(w.patch.heartbeatAt), Object.hasOwn(w.patch, "errorMessage"), w.patch.errorMessage ?? null,
  ]);
  assertBlind(writes);
  return tx.query<Keyword>(Prisma.sql`
    UPDATE "Keyword" AS k SET "status" = v."to",
      "heartbeatAt" = CASE WHEN v."h_set" THEN v."h" ELSE k."heartbeatAt" END,
      "errorMessage" = CASE WHEN v."e_set" THEN v."e" ELSE k."errorMessage" END,
      "version" = k."version" + 1, "updatedAt" = ${sqliteTime(at.now)}
    FROM (SELECT j.value ->> 0 AS "id", j.value ->> 1 AS "token", j.value ->> 2 AS "to", j.value ->> 3 AS "h_set",
                 j.value ->> 4 AS "h", j.value ->> 5 AS "e_set", j.value ->> 6 AS "e"
            FROM json_each(${JSON.stringify(rows)}) j) AS v
    -- the lease's other conditions with a unary + so that no index serves them: each row by its id
    WHERE k."id" = v."id" AND k."leaseToken" = v."token" AND +k."status" = 'CRAWLING' AND +k."crawlDate" = ${at.today}
    RETURNING *`);
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

function candidateQuery(pick: ClaimPick, source: { id: string; maxRetries: number | Prisma.Sql }, today: string, todayStart: Date) {
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
      // index (sourceId, lastRequestedAt, id): the NULL entries, in id (import) order. Ordered by
      // the index's own columns: PostgreSQL does not take `IS NULL` as equality, so ORDER BY "id"
      // alone would sort every never-requested keyword.
      return {
        where: Prisma.sql`"sourceId" = ${source.id} AND "lastRequestedAt" IS NULL AND ("crawlDate" IS NULL OR "crawlDate" <> ${today})`,
        order: Prisma.sql`"lastRequestedAt" ASC, "id" ASC`,
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

/** A claimed (or, with no pages left, finished) keyword as the claim statement returns it. */
export type ClaimedRow = Keyword & {
  /** Index in CLAIM_ORDER of the pick that found it. */
  pick: number;
  /** Nothing left to fetch (maxPages lowered since): COMPLETED instead of leased. */
  done: boolean;
  fromStatus: CrawlStatus;
  /** The reason logged in its CrawlEvent (as decide() gives it). */
  reason: string;
  /** Position in priority order (1-based); the row's lease token is tokens[rn - 1]. */
  rn: number;
  /** jobsFound / pagesCrawled before the claim (for the counters). */
  fromJobs: number;
  fromPages: number;
};

/**
 * PostgreSQL: a whole claim in ONE statement, as pg-boss fetches a job. Each pick of CLAIM_ORDER is
 * its own index range read with FOR UPDATE SKIP LOCKED (concurrent claimers take different rows
 * instead of queueing on the same first one); the first `take` in priority order are written as
 * decide() writes a CLAIM — rules.test.ts / claims.test.ts check the two agree row for row — with
 * their events and the counters. Empty when the source is missing or disabled (the caller tells
 * which). Lease tokens and crawlers come from the caller, one per row (`tokens[rn - 1]`,
 * `crawlerIds[rn - 1]`): several claims can be served by one statement.
 */
export async function claimPostgres(
  tx: SqlTx,
  q: { sourceId: string; crawlerIds: string[]; today: string; todayStart: Date; now: Date; take: number; tokens: string[] },
): Promise<ClaimedRow[]> {
  const source = { id: q.sourceId, maxRetries: Prisma.sql`(SELECT "maxRetries" FROM s)` };
  const picks = CLAIM_ORDER.map((pick, i) => {
    const c = candidateQuery(pick, source, q.today, q.todayStart);
    return Prisma.sql`${Prisma.raw(`p${i}`)} AS (
      SELECT *, ${Prisma.raw(String(i))} AS "pick" FROM "Keyword" WHERE ${c.where} AND EXISTS (SELECT 1 FROM s)
       ORDER BY ${c.order} LIMIT ${q.take} FOR UPDATE SKIP LOCKED)`;
  });
  const all = Prisma.raw(CLAIM_ORDER.map((_, i) => `SELECT * FROM p${i}`).join(" UNION ALL "));
  const fresh = Prisma.raw(`t."pick" >= ${CLAIM_ORDER.indexOf("NEVER_REQUESTED")}`);
  const retry = Prisma.raw(`t."pick" = ${CLAIM_ORDER.indexOf("FAILED")}`);
  const keep = (column: string, value: Prisma.Sql) =>
    Prisma.sql`${Prisma.raw(`"${column}" = CASE WHEN t."done" THEN k."${column}" ELSE `)}${value} END`;
  const resetWhenFresh = (column: string, value: Prisma.Sql) =>
    Prisma.sql`${Prisma.raw(`"${column}" = CASE WHEN `)}${fresh} THEN ${value} ${Prisma.raw(`ELSE k."${column}" END`)}`;
  const fromStatus = Prisma.raw(
    `CASE t."pick" ${CLAIM_ORDER.map((p, i) => `WHEN ${i} THEN '${p === "PARTIAL" || p === "FAILED" ? p : "IDLE"}'`).join(" ")} END::"CrawlStatus"`,
  );
  const reason = Prisma.raw(
    `CASE WHEN t."done" THEN 'no pages left' WHEN t."pick" = ${CLAIM_ORDER.indexOf("PARTIAL")} THEN 'resume' ` +
      `WHEN t."pick" = ${CLAIM_ORDER.indexOf("FAILED")} THEN 'retry' ELSE 'claim' END`,
  );
  return tx.query<ClaimedRow>(Prisma.sql`
    WITH s AS (SELECT "maxPages", "maxRetries" FROM "Source" WHERE "id" = ${q.sourceId} AND "enabled"),
    ${Prisma.join(picks)},
    cand AS (SELECT x.*, row_number() OVER (ORDER BY x."pick", x."lastRequestedAt", x."id")::int AS "rn" FROM (${all}) x),
    t AS (
      SELECT c.*, c."pick" < ${CLAIM_ORDER.indexOf("NEVER_REQUESTED")} AND c."lastCompletedPage" >=
               CASE WHEN c."totalPages" > 0 THEN least(c."totalPages", (SELECT "maxPages" FROM s)) ELSE (SELECT "maxPages" FROM s) END AS "done"
        FROM cand c WHERE c."rn" <= ${q.take}),
    u AS (
      UPDATE "Keyword" k SET
        "status" = CASE WHEN t."done" THEN 'COMPLETED'::"CrawlStatus" ELSE 'CRAWLING'::"CrawlStatus" END,
        "heartbeatAt" = ${q.now}::timestamp,
        ${keep("crawlerId", Prisma.sql`(${q.crawlerIds}::text[])[t."rn"]`)},
        ${keep("leaseToken", Prisma.sql`(${q.tokens}::text[])[t."rn"]`)},
        ${keep("lastRequestedAt", Prisma.sql`${q.now}::timestamp`)},
        ${keep("crawlStartedAt", Prisma.sql`${q.now}::timestamp`)},
        "crawlDate" = ${q.today},
        ${resetWhenFresh("lastCompletedPage", Prisma.sql`0`)},
        ${resetWhenFresh("totalPages", Prisma.sql`0`)},
        ${resetWhenFresh("jobsFound", Prisma.sql`0`)},
        ${resetWhenFresh("pagesCrawled", Prisma.sql`0`)},
        ${resetWhenFresh("errorMessage", Prisma.sql`''`)},
        "retryCount" = CASE WHEN ${fresh} THEN 0 WHEN ${retry} AND NOT t."done" THEN k."retryCount" + 1 ELSE k."retryCount" END,
        "version" = k."version" + 1, "updatedAt" = ${q.now}::timestamp
      FROM t WHERE k."id" = t."id"
      RETURNING k.*, t."pick", t."done", t."rn", ${fromStatus} AS "fromStatus", ${reason} AS "reason",
                t."jobsFound" AS "fromJobs", t."pagesCrawled" AS "fromPages"),
    e AS (
      INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", "reason", "crawlerId", "at")
      SELECT u."id", u."sourceId", ${q.today}, u."fromStatus", u."status", u."reason", (${q.crawlerIds}::text[])[u."rn"], ${q.now}::timestamp
        FROM u ORDER BY u."rn"),
    c AS (
      INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", "status", "shard", "keywords", "jobsFound", "pagesCrawled")
      SELECT ${q.sourceId}, ${q.today}, d."status", ${counterShard()}::int, sum(d."k")::int, sum(d."j")::int, sum(d."p")::int FROM (
          SELECT u."fromStatus" AS "status", -1 AS "k", -u."fromJobs" AS "j", -u."fromPages" AS "p"
            FROM u WHERE u."fromStatus" <> 'IDLE'
          UNION ALL
          SELECT u."status", 1, u."jobsFound", u."pagesCrawled" FROM u) d
       GROUP BY d."status"
      HAVING sum(d."k") <> 0 OR sum(d."j") <> 0 OR sum(d."p") <> 0
       ORDER BY d."status"::text COLLATE "C"
      ${COUNTER_UPSERT})
    SELECT * FROM u ORDER BY u."rn"`);
}

/** Whether a source exists and is enabled (null: no such source). */
export async function sourceEnabled(tx: SqlTx, id: string): Promise<boolean | null> {
  const [row] = await tx.query<{ enabled: boolean | number }>(Prisma.sql`SELECT "enabled" FROM "Source" WHERE "id" = ${id}`);
  return row ? Boolean(row.enabled) : null;
}
