// The crawl state machine's database side: reads a keyword, asks rules.ts what an event does, and
// applies the answer atomically — a compare-and-set on the keyword's `version` inside a
// transaction, together with its page report and its CrawlEvent. This is the only writer of a
// keyword's crawl state.
import { randomBytes } from "node:crypto";
import type { Database, SqlTx } from "../db/client.ts";
import { type Keyword, Prisma, type Source } from "../../../generated/sqlite/client.ts";
import { apiError, ErrorCode, notFound } from "../errors.ts";
import type { CrawlCalendar } from "./crawl-day.ts";
import { type Accepted, type CrawlEventInput, CrawlStatus, decide, type KeywordPatch, type KeywordState } from "./rules.ts";
import { type KeywordDelta, counterDeltas, counterShard, mergeDeltas } from "./counters.ts";
import * as sql from "./sql.ts";
import { coalesce } from "./coalesce.ts";

export interface Claim {
  keyword: Keyword;
  startPage: number;
  leaseToken: string;
  resumed: boolean;
}

export interface Transition {
  from: CrawlStatus;
  to: CrawlStatus;
  reason: string;
  /** The crawler that claimed, or held the keyword. */
  crawlerId: string;
}

/** What one committed transaction changed, for subscribers and metrics. */
export interface CrawlChange {
  sourceId: string;
  keywordIds: number[];
  /** Status changes, as logged in CrawlEvent. */
  transitions?: Transition[];
  /** Page reports written. */
  pageReports?: number;
  /** true for sweeping changes (rollover) that touch more than the listed keywords. */
  all?: boolean;
}

/** Collects what a transaction wrote; emitted only after it commits. */
function journal(sourceId: string): Required<Omit<CrawlChange, "all">> & { counters: KeywordDelta[] } {
  return { sourceId, keywordIds: [], transitions: [], pageReports: 0, counters: [] };
}
type Journal = ReturnType<typeof journal>;

/** A journal per source, made on first use: a batch may touch keywords of several sources. */
class Journals extends Map<string, Journal> {
  of(sourceId: string): Journal {
    let log = this.get(sourceId);
    if (!log) this.set(sourceId, (log = journal(sourceId)));
    return log;
  }
}

/** A coalesced write's answer to a keyword's second event of a turn: ask again (next turn). */
const AGAIN = Symbol("again");

/** Ask a coalesced write until it answers something other than AGAIN (a keyword's later event of a turn). */
async function untilAnswered<I, O>(write: (item: I) => Promise<O | typeof AGAIN>, item: I): Promise<O> {
  for (;;) {
    const done = await write(item);
    if (done !== AGAIN) return done;
  }
}

export type ChangeListener = (change: CrawlChange) => void;
/** What one coalesced write did: its kind and how many requests it served (claims: both databases; the rest: PostgreSQL). */
export type CoalesceListener = (kind: "page_reports" | "leased" | "claims", requests: number) => void;

/**
 * PostgreSQL: a claim of more keywords than this is not held for the turn's others (claimTogether):
 * its statement's cost is spread over its keywords already, and big statements in lockstep would
 * leave the database's other connections idle. (SQLite has one writer: every claim joins.)
 */
const COALESCE_CLAIM_LIMIT = 4;
/** CAS retries before giving up; only concurrent writers to the same keyword cause a retry. */
const MAX_ATTEMPTS = 8;
/** Keywords changed per transaction by the sweeps, so a big sweep never holds the lock long. */
const SWEEP_BATCH = 500;

/** Lease tokens: 18 random bytes each, cut from a pool refilled 4 KiB at a time (one call per ~227). */
const TOKEN_BYTES = 18;
let tokenPool = Buffer.alloc(0);
let tokenAt = 0;
const newLeaseToken = () => {
  if (tokenAt + TOKEN_BYTES > tokenPool.length) {
    tokenPool = randomBytes(4096);
    tokenAt = 0;
  }
  tokenAt += TOKEN_BYTES;
  return tokenPool.toString("base64url", tokenAt - TOKEN_BYTES, tokenAt);
};

class CasConflict extends Error {}

/**
 * What a live lease guarantees of a keyword: CRAWLING today under this token. Everything else is
 * unknown (NaN / empty) — a decision that used it could not be written blind (writesBlind()).
 */
const leasedState = (leaseToken: string, today: string): KeywordState => ({
  status: CrawlStatus.CRAWLING,
  crawlDate: today,
  leaseToken,
  lastCompletedPage: NaN,
  totalPages: NaN,
  jobsFound: NaN,
  pagesCrawled: NaN,
  retryCount: NaN,
  heartbeatAt: null,
  crawlerId: "",
  errorMessage: "",
});
const UNKNOWN_RULES = { maxPages: NaN, maxRetries: NaN, staleAfterSeconds: NaN };
/** Columns whose new value never derives from the row's old one (the event and the clock set them). */
const BLIND_COLUMNS = new Set(["status", "heartbeatAt", "errorMessage"]);
const writesBlind = (patch: KeywordPatch) =>
  Object.entries(patch).every(([column, value]) => BLIND_COLUMNS.has(column) && !(typeof value === "number" && Number.isNaN(value)));

/**
 * The decision for an event on a keyword assumed leased under `leaseToken` (leasedState), when it
 * can be written blind — from CRAWLING, patching only columns that read nothing of the row; else null.
 */
function decideLeased(leaseToken: string, today: string, event: (assumed: Keyword) => CrawlEventInput) {
  const assumed = leasedState(leaseToken, today);
  const d = decide(assumed, UNKNOWN_RULES, event(assumed as Keyword));
  return d.ok && d.from === CrawlStatus.CRAWLING && writesBlind(d.patch) ? d : null;
}

/** A keyword write planned from a decision, with what it does to today's counters. */
type Planned = sql.KeywordWrite & { after: Keyword; patch: KeywordPatch; deltas: KeywordDelta[] };

/** PostgreSQL's deadlock_detected: two batches locked the same rows in different orders. */
const isDeadlock = (e: unknown) => (e as { code?: string }).code === "40P01";

export interface ProgressInput {
  keywordId: number;
  leaseToken: string;
  page: number;
  totalPages?: number | null;
  jobsFound: number;
}
export interface CompleteInput {
  keywordId: number;
  leaseToken: string;
  status: CrawlStatus;
  errorMessage?: string | null;
}
type MakeEvent = (kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput;
/** An event on a keyword its caller holds the lease of (CrawlStore.writeLeased). */
interface LeasedEvent {
  keywordId: number;
  leaseToken: string;
  makeEvent: MakeEvent;
}
interface ClaimRequest {
  sourceId: string;
  crawlerId: string;
  limit: number;
}

/** One item of a batch: the keyword after the event, or why it was refused (nothing written). */
export interface BatchResult {
  keywordId: number;
  keyword?: Keyword;
  error?: { code: string; message: string };
}

const errorOf = (e: { message: string; extensions: Record<string, unknown> }) => ({ code: String(e.extensions.code), message: e.message });
/** A batch item's answer as the single path gives it: the keyword, or its refusal as the typed error. */
const answerOf = (r: BatchResult): Keyword | Error =>
  r.keyword ??
  (r.error!.code === ErrorCode.NOT_FOUND
    ? notFound(r.error!.message)
    : apiError(r.error!.code as ErrorCode, r.error!.message, { keywordId: String(r.keywordId) }));

const progressEvent = (input: ProgressInput, at: { now: Date; today: string }, previousJobsOnPage: number | null): CrawlEventInput => ({
  type: "PROGRESS",
  leaseToken: input.leaseToken,
  page: input.page,
  totalPages: input.totalPages,
  jobsOnPage: input.jobsFound,
  previousJobsOnPage,
  ...at,
});

const completeEvent = (input: CompleteInput, at: { now: Date; today: string }): CrawlEventInput =>
  input.status === CrawlStatus.COMPLETED
    ? { type: "COMPLETE", leaseToken: input.leaseToken, ...at }
    : { type: "FAIL", leaseToken: input.leaseToken, errorMessage: input.errorMessage ?? "", ...at };

export class CrawlStore {
  private listeners = new Set<ChangeListener>();
  private coalesceListeners = new Set<CoalesceListener>();

  constructor(
    private readonly db: Database,
    private readonly calendar: CrawlCalendar,
  ) {}

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hear how many requests each coalesced write served (for /metrics). */
  onCoalesce(listener: CoalesceListener): () => void {
    this.coalesceListeners.add(listener);
    return () => this.coalesceListeners.delete(listener);
  }

  private coalesced(kind: Parameters<CoalesceListener>[0], requests: number) {
    for (const l of this.coalesceListeners) l(kind, requests);
  }

  private emit(change: CrawlChange) {
    for (const l of this.listeners) l(change);
  }

  /**
   * What an accepted decision writes (nothing for a replay). Recorded in a journal only once it
   * committed (record()).
   */
  private plan(kw: Keyword, d: Accepted, crawlerId: string, today: string, now: Date): Planned | null {
    if (Object.keys(d.patch).length === 0) return null;
    const after = { ...kw, ...(d.patch as Partial<Keyword>), version: kw.version + 1, updatedAt: now };
    return {
      before: kw,
      after,
      patch: d.patch,
      crawlerId,
      pageReport: d.pageReport,
      event: d.from !== d.to ? { from: d.from, to: d.to, reason: d.reason } : undefined,
      dropPageReports: d.dropPageReports,
      deltas: counterDeltas(kw, after, today),
    };
  }

  private record(log: Journal, w: Planned, counters = true) {
    log.keywordIds.push(w.before.id);
    if (w.pageReport) log.pageReports++;
    if (w.event) log.transitions.push({ ...w.event, crawlerId: w.crawlerId });
    if (counters) log.counters.push(...w.deltas);
  }

  /**
   * Write one accepted decision inside a transaction: CAS update, page report, event. Throws
   * CasConflict if raced. `alone`: this is the transaction's only keyword write, so on PostgreSQL
   * its counters go in the same statement instead of in settle().
   */
  private async apply(
    tx: SqlTx, kw: Keyword, d: Accepted, crawlerId: string, today: string, now: Date, log: Journal, alone = false,
  ): Promise<Keyword> {
    const w = this.plan(kw, d, crawlerId, today, now);
    if (!w) return kw;
    if (this.db.provider === "postgres") {
      // One round trip for the whole write.
      if ((await this.writeOnePostgres(tx, w, alone, { now, today })) !== 1) throw new CasConflict();
      this.record(log, w, !alone);
    } else {
      if ((await sql.writeKeywordsSqlite(tx, [w], { now, today })) !== 1) throw new CasConflict();
      this.record(log, w);
    }
    return w.after;
  }

  /** PostgreSQL: one keyword's write in one statement, with its counters when `withCounters`. */
  private writeOnePostgres(tx: SqlTx, w: Planned, withCounters: boolean, at: { now: Date; today: string }) {
    const counters = withCounters ? { sourceId: w.before.sourceId, deltas: mergeDeltas(w.deltas, counterShard()) } : null;
    return w.dropPageReports
      ? sql.writeKeywordsPostgres(tx, [w], counters ? [counters] : [], at, false)
      : sql.writeKeywordPostgres(tx, w, counters, at);
  }

  /**
   * Write several planned writes in one go, inside a transaction that holds their rows (locked on
   * PostgreSQL, SQLite's single writer): none can lose its compare-and-set.
   */
  private async applyAll(tx: SqlTx, writes: Planned[], at: { now: Date; today: string }, logOf: (w: Planned) => Journal) {
    if (!writes.length) return;
    const n =
      this.db.provider === "postgres"
        ? await sql.writeKeywordsPostgres(tx, writes, [], at, false)
        : await sql.writeKeywordsSqlite(tx, writes, at);
    if (n !== writes.length) throw new Error(`${writes.length - n} keyword(s) changed under a held write`);
    for (const w of writes) this.record(logOf(w), w);
  }

  /** The last statement of every transaction: today's counters follow its keyword writes. */
  private settle(tx: SqlTx, log: Journal) {
    return sql.addToCounters(tx, this.db.provider, log.sourceId, mergeDeltas(log.counters, counterShard()));
  }

  /**
   * Run one event against one keyword. `makeEvent` sees the current row (and, for page reports,
   * what this page recorded before) so the decision is made on what the transaction read.
   */
  private async transition(
    keywordId: number,
    makeEvent: (kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput,
    opts: { page?: number; lease?: string } = {},
  ): Promise<Keyword> {
    if (this.db.autocommit && opts.lease !== undefined) {
      const done = await this.writeLeased({ keywordId, leaseToken: opts.lease, makeEvent });
      if (done) return done;
    }
    // SQLite: the same blind write, with the turn's other leased events in one transaction.
    if (!this.db.autocommit && opts.lease !== undefined) {
      const [done] = await this.leasedTogetherSqlite([{ keywordId, leaseToken: opts.lease, makeEvent }]);
      const answer = answerOf(done!);
      if (answer instanceof Error) throw answer;
      return answer;
    }
    if (this.db.autocommit) {
      const done = await this.transitionAutocommit(this.db.autocommit, keywordId, makeEvent, opts);
      if (done) return done;
    }
    for (let attempt = 1; ; attempt++) {
      const now = this.calendar.now();
      const today = this.calendar.today();
      try {
        const result = await this.db.transaction(async (tx) => {
          const { row, d } = await this.loadAndDecide(tx, keywordId, makeEvent, opts, { now, today }, false);
          const log = journal(row.sourceId);
          const kw = await this.apply(tx, row, d, row.crawlerId, today, now, log, true);
          await this.settle(tx, log);
          return { kw, log };
        });
        if (result.log.keywordIds.length) this.emit(result.log);
        return result.kw;
      } catch (e) {
        if (e instanceof CasConflict && attempt < MAX_ATTEMPTS) continue;
        throw e;
      }
    }
  }

  /**
   * Read a keyword (with its source's rules and, for a page report, that page's earlier report) and
   * decide `makeEvent` on it; NOT_FOUND or the rules' refusal are thrown. `unlocked`: read without
   * taking the PostgreSQL row lock (the write's compare-and-set guards it instead).
   */
  private async loadAndDecide(
    tx: SqlTx,
    keywordId: number,
    makeEvent: (kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput,
    opts: { page?: number },
    at: { now: Date; today: string },
    unlocked: boolean,
  ): Promise<{ row: Keyword; d: Accepted }> {
    const page = opts.page !== undefined && Number.isInteger(opts.page) ? opts.page : null;
    const loaded = await sql.loadKeyword(tx, this.db.provider, keywordId, at.today, page, unlocked);
    if (!loaded) throw notFound(`keyword ${keywordId} does not exist`);
    const { keyword: row, source, previousJobsOnPage } = loaded;
    const d = decide(row, source, makeEvent(row, at, previousJobsOnPage));
    if (!d.ok) throw apiError(d.code, d.message, { keywordId: String(keywordId) });
    return { row, d };
  }

  /**
   * PostgreSQL, an event on a keyword the caller holds the lease of, in ONE round trip: decided on
   * the state the lease guarantees (CRAWLING today, this token) and written with that state as the
   * statement's condition. Only for decisions that read nothing else of the row (complete, fail,
   * release, heartbeat); null when the keyword is not so leased — the caller then reads the row and
   * decides on what it holds (a replay, LEASE_LOST, …). The leased events that arrive in the same
   * turn are written by one statement (coalesce.ts), each answered on its own; a keyword's second
   * event of a turn goes with the next turn's, after the first is written.
   */
  private writeLeased(item: LeasedEvent): Promise<Keyword | null> {
    return untilAnswered(this.writeLeasedTogether, item);
  }

  private readonly writeLeasedTogether = coalesce((items: readonly LeasedEvent[]) => {
    this.coalesced("leased", items.length);
    return this.writeLeasedNow(items);
  });

  /**
   * PostgreSQL: leased events written in one statement (sql.writeLeasedManyPostgres); `out[i]`
   * answers `items[i]`: the keyword after, null when it is not written blind (see writeLeased), or
   * AGAIN for a keyword's second event (to be asked once the first is written).
   */
  private async writeLeasedNow(items: readonly LeasedEvent[]): Promise<(Keyword | null | typeof AGAIN)[]> {
    const now = this.calendar.now();
    const today = this.calendar.today();
    const at = { now, today };
    const out: (Keyword | null | typeof AGAIN)[] = items.map(() => null);
    const writes: sql.LeasedWrite[] = [];
    const slots: number[] = [];
    const seen = new Set<number>();
    items.forEach((item, i) => {
      const d = decideLeased(item.leaseToken, today, (assumed) => item.makeEvent(assumed, at, null));
      if (!d) return;
      if (seen.has(item.keywordId)) return void (out[i] = AGAIN);
      seen.add(item.keywordId);
      writes.push({ id: item.keywordId, leaseToken: item.leaseToken, patch: d.patch, to: d.to, reason: d.reason });
      slots.push(i);
    });
    if (!writes.length) return out;
    let rows: (Keyword | null)[];
    try {
      rows = await sql.writeLeasedManyPostgres(this.db.autocommit!, writes, at);
    } catch (e) {
      if (isDeadlock(e)) return out;
      throw e;
    }
    this.emitLeased(rows, writes);
    rows.forEach((row, k) => (out[slots[k]!] = row));
    return out;
  }

  /** Tell subscribers what leased writes did (rows: what the statement returned, null: not written). */
  private emitLeased(rows: (Keyword | null)[], writes: sql.LeasedWrite[]) {
    const logs = new Journals();
    rows.forEach((row, i) => {
      if (!row) return;
      const log = logs.of(row.sourceId);
      log.keywordIds.push(row.id);
      const w = writes[i]!;
      if (w.to !== CrawlStatus.CRAWLING) log.transitions.push({ from: CrawlStatus.CRAWLING, to: w.to, reason: w.reason, crawlerId: row.crawlerId });
    });
    for (const log of logs.values()) this.emit(log);
  }

  /**
   * PostgreSQL, the common case in two round trips and no transaction: read the keyword, decide,
   * and write everything in one statement that commits only if the row still has the version that
   * was read. Null when a concurrent write got there first: the caller then takes the locked path,
   * which queues on the row instead of racing again.
   */
  private async transitionAutocommit(
    run: SqlTx,
    keywordId: number,
    makeEvent: (kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput,
    opts: { page?: number },
  ): Promise<Keyword | null> {
    const now = this.calendar.now();
    const today = this.calendar.today();
    const { row, d } = await this.loadAndDecide(run, keywordId, makeEvent, opts, { now, today }, true);
    const w = this.plan(row, d, row.crawlerId, today, now);
    if (!w) return row;
    if ((await this.writeOnePostgres(run, w, true, { now, today })) !== 1) return null;
    const log = journal(row.sourceId);
    this.record(log, w, false);
    this.emit(log);
    return w.after;
  }

  /**
   * PostgreSQL: a batch in two round trips — one read of every keyword, one all-or-nothing write
   * statement. Null (nothing written) when a keyword appears twice (the second item must see the
   * first's write) or a concurrent write changed one of them: the locked path takes over.
   */
  private async transitionManyAutocommit<I extends { keywordId: number }>(
    run: SqlTx,
    items: I[],
    makeEvent: (item: I, kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput,
    pageOf: (item: I) => number | null,
  ): Promise<BatchResult[] | null> {
    if (new Set(items.map((i) => i.keywordId)).size !== items.length) return null;
    const now = this.calendar.now();
    const today = this.calendar.today();
    const loaded = await sql.loadKeywords(run, "postgres", items.map((i) => ({ id: i.keywordId, page: pageOf(i) })), today);
    const out: BatchResult[] = [];
    const writes: Planned[] = [];
    items.forEach((item, i) => {
      const l = loaded[i];
      if (!l) return out.push({ keywordId: item.keywordId, error: errorOf(notFound(`keyword ${item.keywordId} does not exist`)) });
      const d = decide(l.keyword, l.source, makeEvent(item, l.keyword, { now, today }, l.previousJobsOnPage));
      if (!d.ok) return out.push({ keywordId: item.keywordId, error: { code: d.code, message: d.message } });
      const w = this.plan(l.keyword, d, l.keyword.crawlerId, today, now);
      if (w) writes.push(w);
      return out.push({ keywordId: item.keywordId, keyword: w ? w.after : l.keyword });
    });
    const logs = new Journals();
    for (const w of writes) this.record(logs.of(w.before.sourceId), w);
    if (writes.length) {
      const shard = counterShard();
      const counters = [...logs.values()].map((log) => ({ sourceId: log.sourceId, deltas: mergeDeltas(log.counters, shard) }));
      try {
        await sql.writeKeywordsPostgres(run, writes, counters, { now, today }, true);
      } catch (e) {
        if (sql.isCasFailure(e) || isDeadlock(e)) return null;
        throw e;
      }
    }
    for (const log of logs.values()) if (log.keywordIds.length) this.emit(log);
    return out;
  }

  /**
   * Run one event against each of several keywords in ONE transaction (a batch of reports or
   * completions). Each item is decided on what the transaction read, after the items before it;
   * a refused item changes nothing and gets its typed error, the others commit together.
   */
  private async transitionMany<I extends { keywordId: number }>(
    items: I[],
    makeEvent: (item: I, kw: Keyword, at: { now: Date; today: string }, previousJobsOnPage: number | null) => CrawlEventInput,
    pageOf: (item: I) => number | null = () => null,
  ): Promise<BatchResult[]> {
    if (!items.length) return [];
    if (this.db.autocommit) {
      const done = await this.transitionManyAutocommit(this.db.autocommit, items, makeEvent, pageOf);
      if (done) return done;
    }
    const now = this.calendar.now();
    const today = this.calendar.today();
    const logs = new Journals();
    const results = await this.db.transaction(async (tx) => {
      if (this.db.provider === "postgres") await sql.lockKeywords(tx, items.map((i) => i.keywordId));
      const out: BatchResult[] = [];
      const logOf = (w: Planned) => logs.of(w.before.sourceId);
      // Writes wait to go together; an item on a keyword with a pending write first writes them,
      // so it is decided on what the items before it did.
      let pending: Planned[] = [];
      const flush = async () => {
        await this.applyAll(tx, pending, { now, today }, logOf);
        pending = [];
      };
      // Every keyword read in one statement; one that an earlier item of the batch wrote is read again.
      const read = await sql.loadKeywords(tx, this.db.provider, items.map((i) => ({ id: i.keywordId, page: pageOf(i) })), today);
      const written = new Set<number>();
      for (const [i, item] of items.entries()) {
        if (pending.some((w) => w.before.id === item.keywordId)) await flush();
        const loaded = written.has(item.keywordId)
          ? await sql.loadKeyword(tx, this.db.provider, item.keywordId, today, pageOf(item), true)
          : read[i];
        if (!loaded) {
          out.push({ keywordId: item.keywordId, error: errorOf(notFound(`keyword ${item.keywordId} does not exist`)) });
          continue;
        }
        const { keyword: row, source, previousJobsOnPage } = loaded;
        const d = decide(row, source, makeEvent(item, row, { now, today }, previousJobsOnPage));
        if (!d.ok) {
          out.push({ keywordId: item.keywordId, error: { code: d.code, message: d.message } });
          continue;
        }
        const w = this.plan(row, d, row.crawlerId, today, now);
        if (w) {
          pending.push(w);
          written.add(item.keywordId);
        }
        out.push({ keywordId: item.keywordId, keyword: w ? w.after : row });
      }
      await flush();
      for (const log of logs.values()) await this.settle(tx, log);
      return out;
    });
    for (const log of logs.values()) if (log.keywordIds.length) this.emit(log);
    return results;
  }

  /**
   * SQLite: the page reports of one turn (coalesce.ts) as one batch, each answered on its own —
   * the keyword after, or its refusal thrown as the single path throws it.
   */
  private readonly progressTogetherSqlite = coalesce(async (inputs: readonly ProgressInput[]) =>
    (await this.reportPagesProgress([...inputs])).map(answerOf),
  );

  /**
   * SQLite: the leased events (complete, fail, release, heartbeat) of one turn — single requests
   * and whole batches (completeMany) alike — in one transaction: written blind together when every
   * lease holds (transitionManyLeased), else read and decided together in arrival order
   * (transitionMany); each request answered with its own items' results.
   */
  private readonly leasedTogetherSqlite = coalesce(async (units: readonly LeasedEvent[][]) => {
    const batch = units.flat();
    const done =
      (await this.transitionManyLeased(batch, (item, at, assumed) => item.makeEvent(assumed, at, null))) ??
      (await this.transitionMany(batch, (item, kw, at, previousJobsOnPage) => item.makeEvent(kw, at, previousJobsOnPage)));
    let next = 0;
    return units.map((unit) => done.slice(next, (next += unit.length)));
  });

  /** Several page reports in one transaction; per-item keyword or error (see reportPageProgress). */
  reportPagesProgress(inputs: ProgressInput[]) {
    return this.transitionMany(inputs, (input, _kw, at, previousJobsOnPage) => progressEvent(input, at, previousJobsOnPage), (i) => i.page);
  }

  /** Several completions in one transaction; per-item keyword or error (see complete). */
  async completeMany(inputs: CompleteInput[]): Promise<BatchResult[]> {
    const leased = inputs.map((input): LeasedEvent => ({ keywordId: input.keywordId, leaseToken: input.leaseToken, makeEvent: (_kw, at) => completeEvent(input, at) }));
    // SQLite: with the turn's other leased events, in one transaction.
    if (!this.db.autocommit) return this.leasedTogetherSqlite(leased);
    // PostgreSQL: the batch's leased writes in one statement (a batch is big enough on its own: not
    // held for the turn's others); the items not written — lease not held, a keyword's second
    // item — are then read and decided together, in input order, after the written ones.
    const done = await this.writeLeasedNow(leased);
    const fast = done.map((k) => (k === AGAIN ? null : k));
    const rest = await this.transitionMany(inputs.filter((_, i) => !fast[i]), (input, _kw, at) => completeEvent(input, at));
    let next = 0;
    return inputs.map((input, i) => (fast[i] ? { keywordId: input.keywordId, keyword: fast[i] } : rest[next++]!));
  }

  /**
   * SQLite: a batch of events on leased keywords written without reading them first, all or
   * nothing, in one transaction: each item decided on the state its lease guarantees (see
   * writeLeased), one UPDATE whose WHERE is every item's lease, events and counters from the rows
   * it returns. Null (nothing written) unless every item is decided blind and every keyword holds
   * its lease: the caller then reads and decides (replays, LEASE_LOST, a keyword twice, …).
   */
  private async transitionManyLeased<I extends { keywordId: number; leaseToken: string }>(
    items: I[],
    makeEvent: (item: I, at: { now: Date; today: string }, assumed: Keyword) => CrawlEventInput,
  ): Promise<BatchResult[] | null> {
    if (!items.length || new Set(items.map((i) => i.keywordId)).size !== items.length) return null;
    const now = this.calendar.now();
    const today = this.calendar.today();
    const at = { now, today };
    const writes: sql.LeasedWrite[] = [];
    for (const item of items) {
      const d = decideLeased(item.leaseToken, today, (assumed) => makeEvent(item, at, assumed));
      if (!d) return null;
      writes.push({ id: item.keywordId, leaseToken: item.leaseToken, patch: d.patch, to: d.to, reason: d.reason });
    }
    const logs = new Journals();
    const missed = new Error("a lease does not hold");
    let rows: Keyword[];
    try {
      rows = await this.db.transaction(async (tx) => {
        const changed = await sql.updateLeasedSqlite(tx, writes, at);
        if (changed.length !== writes.length) throw missed; // roll back
        const byId = new Map(changed.map((k) => [k.id, k]));
        const planned = writes.map((w): Planned => {
          const after = byId.get(w.id)!;
          const before = { ...after, status: CrawlStatus.CRAWLING };
          return {
            before, after, patch: w.patch, crawlerId: after.crawlerId,
            event: w.to !== CrawlStatus.CRAWLING ? { from: CrawlStatus.CRAWLING, to: w.to, reason: w.reason } : undefined,
            deltas: counterDeltas(before, after, today),
          };
        });
        await sql.writeEffectsSqlite(tx, planned, at);
        for (const w of planned) this.record(logs.of(w.before.sourceId), w);
        for (const log of logs.values()) await this.settle(tx, log);
        return planned.map((w) => w.after);
      });
    } catch (e) {
      if (e === missed) return null;
      throw e;
    }
    for (const log of logs.values()) this.emit(log);
    return rows.map((row) => ({ keywordId: row.id, keyword: row }));
  }

  /**
   * Claim up to `limit` keywords of a source, atomically: PARTIAL first (resume), then FAILED with
   * retries left, then fresh keywords, least recently requested first.
   */
  claim(sourceId: string, crawlerId: string, limit: number): Promise<Claim[]> {
    return this.claimTogether({ sourceId, crawlerId, limit });
  }

  /**
   * SQLite: claims of one source in one transaction (joining the writer's group commit): the
   * candidates in priority order, read for all the requests at once, dealt out in request order,
   * each request its `limit`. Reads again while a read may hold more: a candidate finished on the
   * spot (no pages left) fills no claim.
   */
  private async claimGroupSqlite(sourceId: string, reqs: readonly ClaimRequest[]): Promise<Claim[][]> {
    const now = this.calendar.now();
    const today = this.calendar.today();
    const todayStart = this.calendar.startOf(today);
    const log = journal(sourceId);
    const out = reqs.map((): Claim[] => []);
    const want = reqs.map((r) => r.limit);
    await this.db.transaction(async (tx) => {
      const source = await sql.loadSource(tx, sourceId);
      if (!source) throw notFound(`source "${sourceId}" does not exist`);
      if (!source.enabled) return;
      // Candidates seen in this claim; the next read skips them.
      const skip = new Set<number>();
      // The request the next claimed keyword goes to: the first with slots left.
      let j = 0;
      /** Lease what a read found; true when it may hold more (it returned all it was asked for). */
      const take = async (read: (n: number) => Promise<Keyword[]>) => {
        const n = want.reduce((sum, x) => sum + x, 0);
        if (n <= 0) return false;
        const rows = await read(n);
        const writes: Planned[] = [];
        for (const kw of rows) {
          skip.add(kw.id);
          while (want[j] === 0) j++;
          const { crawlerId } = reqs[j]!;
          const leaseToken = newLeaseToken();
          const d = decide(kw, source, { type: "CLAIM", crawlerId, leaseToken, now, today });
          const w = d.ok ? this.plan(kw, d, crawlerId, today, now) : null;
          if (!d.ok || !w) continue;
          writes.push(w);
          if (d.to !== CrawlStatus.CRAWLING) continue;
          out[j]!.push({ keyword: w.after, leaseToken, startPage: d.startPage!, resumed: d.resumed! });
          want[j]!--;
        }
        await this.applyAll(tx, writes, { now, today }, () => log);
        return rows.length === n;
      };
      for (const pick of sql.CLAIM_ORDER) {
        while (await take((n) => sql.claimCandidates(tx, this.db.provider, source, { today, todayStart }, pick, n, [...skip])));
      }
      await this.settle(tx, log);
    });
    if (log.keywordIds.length) this.emit(log);
    return out;
  }

  /**
   * The claims of one turn (coalesce.ts), written together per source — on PostgreSQL one
   * statement (claimGroup), on SQLite one transaction (claimGroupSqlite); on PostgreSQL a big
   * claim (more than COALESCE_CLAIM_LIMIT keywords) goes alone.
   */
  private readonly claimTogether = coalesce(async (reqs: readonly ClaimRequest[]): Promise<(Claim[] | Error)[]> => {
    const groups = new Map<string, number[]>();
    reqs.forEach((r, i) => {
      const key = this.db.autocommit && r.limit > COALESCE_CLAIM_LIMIT ? `${i}\0${r.sourceId}` : r.sourceId;
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const out: (Claim[] | Error)[] = new Array(reqs.length);
    await Promise.all(
      [...groups.values()].map(async (group) => {
        this.coalesced("claims", group.length);
        try {
          const sourceId = reqs[group[0]!]!.sourceId;
          const members = group.map((i) => reqs[i]!);
          const claims = await (this.db.autocommit ? this.claimGroup(sourceId, members) : this.claimGroupSqlite(sourceId, members));
          group.forEach((i, k) => (out[i] = claims[k]!));
        } catch (e) {
          for (const i of group) out[i] = e as Error;
        }
      }),
    );
    return out;
  });

  /**
   * PostgreSQL: claims of one source in ONE statement (sql.claimPostgres), as pg-boss fetches a job:
   * the candidates in priority order are dealt out in request order, each request its `limit`.
   * It reads again only when a candidate finished on the spot (no pages left) and so filled no claim.
   */
  private async claimGroup(sourceId: string, reqs: readonly ClaimRequest[]): Promise<Claim[][]> {
    const run = this.db.autocommit!;
    const log = journal(sourceId);
    const out = reqs.map((): Claim[] => []);
    let want = reqs.map((r) => r.limit);
    for (;;) {
      const now = this.calendar.now();
      const today = this.calendar.today();
      // Slot n (rn = n + 1) of the statement is request owner[n]'s.
      const owner = want.flatMap((n, j) => Array.from({ length: n }, () => j));
      const crawlerIds = owner.map((j) => reqs[j]!.crawlerId);
      const tokens = owner.map(newLeaseToken);
      const rows = await sql.claimPostgres(run, { sourceId, crawlerIds, today, todayStart: this.calendar.startOf(today), now, take: owner.length, tokens });
      const got = want.map(() => 0);
      for (const { pick: _pick, done, fromStatus, reason, rn, fromJobs: _j, fromPages: _p, ...keyword } of rows) {
        log.keywordIds.push(keyword.id);
        log.transitions.push({ from: fromStatus, to: keyword.status, reason, crawlerId: crawlerIds[rn - 1]! });
        if (done) continue;
        const j = owner[rn - 1]!;
        got[j]!++;
        const startPage = fromStatus === CrawlStatus.IDLE ? 1 : keyword.lastCompletedPage + 1;
        out[j]!.push({ keyword, leaseToken: keyword.leaseToken!, startPage, resumed: startPage > 1 });
      }
      want = want.map((n, j) => n - got[j]!);
      if (rows.length < owner.length || want.every((n) => n === 0)) break;
    }
    if (!log.keywordIds.length) {
      const enabled = await sql.sourceEnabled(run, sourceId);
      if (enabled === null) throw notFound(`source "${sourceId}" does not exist`);
    } else this.emit(log);
    return out;
  }

  async reportPageProgress(input: ProgressInput) {
    // SQLite: with the turn's other page reports, as a batch (one read of every keyword, one write).
    if (!this.db.autocommit) return this.progressTogetherSqlite(input);
    const done = await this.writeProgress(input);
    if (done) return done;
    return this.transition(input.keywordId, (_kw, at, previousJobsOnPage) => progressEvent(input, at, previousJobsOnPage), { page: input.page });
  }

  /**
   * PostgreSQL: a page report under a live lease in one statement (sql.writeProgressPostgres),
   * with the other page reports of the same turn (coalesce.ts), each answered on its own. The checks
   * of the report itself are decide()'s, on a probe that passes every check of the row; null
   * (nothing written) when one fails or the keyword is not so leased: the caller reads and decides,
   * and answers with the rule's code. A keyword's second report of a turn goes with the next turn's,
   * after the first is written.
   */
  private writeProgress(input: ProgressInput): Promise<Keyword | null> {
    return untilAnswered(this.writeProgressTogether, input);
  }

  private readonly writeProgressTogether = coalesce(async (inputs: readonly ProgressInput[]): Promise<(Keyword | null | typeof AGAIN)[]> => {
    const now = this.calendar.now();
    const today = this.calendar.today();
    const out: (Keyword | null | typeof AGAIN)[] = inputs.map(() => null);
    const reports: sql.LeasedProgress[] = [];
    const slots: number[] = [];
    const seen = new Set<number>();
    inputs.forEach((input, i) => {
      const probe = { ...leasedState(input.leaseToken, today), lastCompletedPage: 0, totalPages: 0, jobsFound: 0, pagesCrawled: 0 };
      const d = decide(probe, { maxPages: Infinity, maxRetries: NaN, staleAfterSeconds: NaN }, progressEvent(input, { now, today }, null));
      if (!d.ok) return;
      if (seen.has(input.keywordId)) return void (out[i] = AGAIN);
      seen.add(input.keywordId);
      reports.push({ id: input.keywordId, leaseToken: input.leaseToken, page: input.page, totalPages: input.totalPages ?? 0, jobs: input.jobsFound });
      slots.push(i);
    });
    if (!reports.length) return out;
    this.coalesced("page_reports", reports.length);
    let rows: (Keyword | null)[];
    try {
      rows = await sql.writeProgressPostgres(this.db.autocommit!, reports, { now, today });
    } catch (e) {
      if (isDeadlock(e)) return out;
      throw e;
    }
    const logs = new Journals();
    rows.forEach((row, k) => {
      if (!row) return;
      out[slots[k]!] = row;
      const log = logs.of(row.sourceId);
      log.keywordIds.push(row.id);
      log.pageReports++;
      if (row.status === CrawlStatus.COMPLETED) log.transitions.push({ from: CrawlStatus.CRAWLING, to: CrawlStatus.COMPLETED, reason: "last page", crawlerId: row.crawlerId });
    });
    for (const log of logs.values()) this.emit(log);
    return out;
  });

  complete(input: CompleteInput) {
    if (input.status !== CrawlStatus.COMPLETED && input.status !== CrawlStatus.FAILED) {
      return Promise.reject(apiError(ErrorCode.BAD_USER_INPUT, `status must be COMPLETED or FAILED, not ${input.status}`));
    }
    return this.transition(input.keywordId, (_kw, at) => completeEvent(input, at), { lease: input.leaseToken });
  }

  release(keywordId: number, leaseToken: string) {
    return this.transition(keywordId, (_kw, at) => ({ type: "RELEASE", leaseToken, ...at }), { lease: leaseToken });
  }

  heartbeat(keywordId: number, leaseToken: string) {
    return this.transition(keywordId, (_kw, at) => ({ type: "HEARTBEAT", leaseToken, ...at }), { lease: leaseToken });
  }

  /** Operator action: forget today's crawl state; any live lease is revoked. */
  reset(keywordId: number) {
    return this.transition(keywordId, (_kw, at) => ({ type: "RESET", ...at }));
  }

  /** Operator action: take a CRAWLING keyword from its crawler without the lease → PARTIAL. */
  forceRelease(keywordId: number) {
    return this.transition(keywordId, (_kw, at) => ({ type: "FORCE_RELEASE", ...at }));
  }

  /** Operator action: a FAILED keyword → PARTIAL, so the next claim resumes it. */
  retry(keywordId: number) {
    return this.transition(keywordId, (_kw, at) => ({ type: "RETRY", ...at }));
  }

  /**
   * Apply a sweeping event (STALE, ROLLOVER) to every keyword `where` selects, in batches.
   * Returns how many changed per source. `drains`: the event takes every row it changes out of
   * `where`, so each batch reads the first rows still selected — one index range walked once —
   * instead of paging in id order (which re-reads the range at every batch when the index is not
   * in id order); it stops when a batch changes nothing.
   */
  private async sweep(
    type: "STALE" | "ROLLOVER",
    filter: (today: string, now: Date, source: Source) => Prisma.Sql,
    drains = false,
  ): Promise<Map<string, number>> {
    const now = this.calendar.now();
    const today = this.calendar.today();
    const changed = new Map<string, number>();
    const sources = await this.db.reader.source.findMany();
    for (const source of sources) {
      let afterId = 0;
      for (;;) {
        const batch = await this.db.transaction(async (tx) => {
          // Rows another transaction is writing (a spider's report) are skipped: not ours now. The
          // rows read are locked (SQLite: the writer's own), so the batch is written in one go.
          const lock = this.db.provider === "postgres" ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.empty;
          const rows = await tx.query<Keyword>(
            drains
              ? Prisma.sql`SELECT * FROM "Keyword" WHERE "sourceId" = ${source.id} AND ${filter(today, now, source)} LIMIT ${SWEEP_BATCH} ${lock}`
              : Prisma.sql`
            SELECT * FROM "Keyword" WHERE "sourceId" = ${source.id} AND "id" > ${afterId} AND ${filter(today, now, source)}
             ORDER BY "id" LIMIT ${SWEEP_BATCH} ${lock}`,
          );
          const log = journal(source.id);
          const writes: Planned[] = [];
          for (const kw of rows) {
            const d = decide(kw, source, { type, now, today });
            if (!d.ok) continue;
            const w = this.plan(kw, d, kw.crawlerId, today, now);
            if (w) writes.push(w);
          }
          await this.applyAll(tx, writes, { now, today }, () => log);
          await this.settle(tx, log);
          return { last: rows.at(-1)?.id, log, full: rows.length === SWEEP_BATCH };
        });
        if (batch.log.keywordIds.length) {
          changed.set(source.id, (changed.get(source.id) ?? 0) + batch.log.keywordIds.length);
          this.emit(batch.log);
        }
        if (!batch.full || batch.last === undefined || (drains && !batch.log.keywordIds.length)) break;
        afterId = batch.last;
      }
    }
    return changed;
  }

  /** CRAWLING keywords whose last heartbeat is older than their source's staleAfterSeconds → PARTIAL. */
  sweepStale() {
    return this.sweep("STALE", (today, now, source) => {
      const cutoff = new Date(now.getTime() - source.staleAfterSeconds * 1000);
      return Prisma.sql`"status" = 'CRAWLING' AND "crawlDate" = ${today} AND ("heartbeatAt" IS NULL OR "heartbeatAt" < ${cutoff})`;
    });
  }

  /** Materialise the new crawl day: state stored for another day → IDLE, and tell subscribers. */
  async rollover() {
    // One range of (sourceId, status, …) per status; every row changed becomes IDLE and leaves it.
    const changed = await this.sweep(
      "ROLLOVER",
      (today) => Prisma.sql`"status" IN ('CRAWLING', 'COMPLETED', 'FAILED', 'PARTIAL') AND ("crawlDate" IS NULL OR "crawlDate" <> ${today})`,
      true,
    );
    // Every source's distribution is new today, even where no row had to change.
    for (const s of await this.db.reader.source.findMany({ select: { id: true } })) {
      this.emit({ sourceId: s.id, keywordIds: [], all: true });
    }
    return changed;
  }
  /**
   * Run `fn` in one write transaction while `leaseToken` holds the keyword, for writes that ride
   * along a crawl (postings of a page): the live lease of a CRAWLING keyword, or the lease that
   * completed it for a page it reported today (a retry whose answer was lost). Refused as a
   * heartbeat would be (LEASE_LOST, INVALID_TRANSITION, NOT_FOUND); the crawl state is not touched.
   */
  withLease<T>(
    keywordId: number,
    leaseToken: string,
    page: number,
    fn: (tx: SqlTx, lease: { keyword: Keyword; today: string; now: Date }) => Promise<T>,
  ): Promise<T> {
    const now = this.calendar.now();
    const today = this.calendar.today();
    return this.db.transaction(async (tx) => {
      const loaded = await sql.loadKeyword(tx, this.db.provider, keywordId, today, page);
      if (!loaded) throw notFound(`keyword ${keywordId} does not exist`);
      const { keyword, source, previousJobsOnPage } = loaded;
      if (page > source.maxPages) {
        throw apiError(ErrorCode.BAD_USER_INPUT, `page ${page} is beyond this source's maxPages (${source.maxPages})`);
      }
      const replay =
        keyword.crawlDate === today && keyword.status === CrawlStatus.COMPLETED && keyword.leaseToken === leaseToken && previousJobsOnPage !== null;
      if (!replay) {
        const d = decide(keyword, source, { type: "HEARTBEAT", leaseToken, now, today });
        if (!d.ok) throw apiError(d.code, d.message, { keywordId: String(keywordId) });
      }
      return fn(tx, { keyword, today, now });
    });
  }
}
