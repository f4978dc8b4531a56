// The crawl state machine's rules: pure functions from (keyword state, source settings, event) to
// either a patch to apply or a typed refusal. No I/O here; store.ts applies what these decide, and
// nothing else in the code base decides a keyword's status.
//
//   IDLE ──claim──► CRAWLING ──last page / complete──► COMPLETED
//   CRAWLING ──fail──► FAILED ──claim (retryCount < maxRetries)──► CRAWLING
//   CRAWLING ──no heartbeat for staleAfter / release──► PARTIAL ──claim (resume)──► CRAWLING
//   next crawl day: every state ► IDLE (read that way at once; materialised by the rollover job)
//   operator: any ──reset──► IDLE; CRAWLING ──force release──► PARTIAL; FAILED ──retry──► PARTIAL
import { CrawlStatus } from "../../../generated/sqlite/enums.ts";
import { ErrorCode } from "../errors.ts";

export { CrawlStatus };

/** Largest page count or per-page job count we believe; anything above is a client bug. */
export const MAX_TOTAL_PAGES = 10_000;
export const MAX_JOBS_PER_PAGE = 10_000;

export interface KeywordState {
  status: CrawlStatus;
  crawlDate: string | null;
  lastCompletedPage: number;
  totalPages: number;
  jobsFound: number;
  pagesCrawled: number;
  retryCount: number;
  leaseToken: string | null;
  heartbeatAt: Date | null;
  crawlerId: string;
  errorMessage: string;
}

export interface SourceRules {
  maxPages: number;
  maxRetries: number;
  staleAfterSeconds: number;
}

interface At {
  now: Date;
  today: string;
}

export type CrawlEventInput =
  | ({ type: "CLAIM"; crawlerId: string; leaseToken: string } & At)
  | ({
      type: "PROGRESS";
      leaseToken: string;
      page: number;
      totalPages?: number | null;
      jobsOnPage: number;
      /** jobsFound already recorded for this page today, if it was reported before. */
      previousJobsOnPage: number | null;
    } & At)
  | ({ type: "HEARTBEAT"; leaseToken: string } & At)
  | ({ type: "COMPLETE"; leaseToken: string } & At)
  | ({ type: "FAIL"; leaseToken: string; errorMessage: string } & At)
  | ({ type: "RELEASE"; leaseToken: string } & At)
  | ({ type: "STALE" } & At)
  | ({ type: "ROLLOVER" } & At)
  | ({ type: "RESET" } & At)
  /** Operator: take a keyword from its crawler without its lease (a crawler that hangs). */
  | ({ type: "FORCE_RELEASE" } & At)
  /** Operator: give a FAILED keyword one more attempt, resumed by the next claim. */
  | ({ type: "RETRY" } & At);

export type CrawlEventType = CrawlEventInput["type"];
export const EVENT_TYPES: readonly CrawlEventType[] = [
  "CLAIM",
  "PROGRESS",
  "HEARTBEAT",
  "COMPLETE",
  "FAIL",
  "RELEASE",
  "STALE",
  "ROLLOVER",
  "RESET",
  "FORCE_RELEASE",
  "RETRY",
];
export const STATUSES: readonly CrawlStatus[] = Object.values(CrawlStatus);

/** Columns a transition may write. */
export type KeywordPatch = Partial<{
  status: CrawlStatus;
  crawlDate: string | null;
  lastRequestedAt: Date | null;
  lastCompletedPage: number;
  totalPages: number;
  jobsFound: number;
  pagesCrawled: number;
  crawlStartedAt: Date | null;
  heartbeatAt: Date | null;
  crawlerId: string;
  errorMessage: string;
  retryCount: number;
  leaseToken: string | null;
}>;

export interface Accepted {
  ok: true;
  from: CrawlStatus;
  to: CrawlStatus;
  /** Columns to write; empty for an idempotent replay. */
  patch: KeywordPatch;
  /** Recorded in the CrawlEvent log when from !== to. */
  reason: string;
  /** For CLAIM: the first page the crawler should fetch. */
  startPage?: number;
  resumed?: boolean;
  /** PROGRESS: the page report to store (absent for a replay). */
  pageReport?: { page: number; jobsFound: number };
  /** RESET: forget today's page reports too, so jobsFound stays their sum when the day restarts. */
  dropPageReports?: boolean;
}

export interface Refused {
  ok: false;
  code: ErrorCode;
  message: string;
}

export type Decision = Accepted | Refused;

const refuse = (code: ErrorCode, message: string): Refused => ({ ok: false, code, message });

/** The status a keyword has today: state stored for another crawl day reads as IDLE. */
export function effectiveStatus(state: Pick<KeywordState, "status" | "crawlDate">, today: string): CrawlStatus {
  return state.crawlDate === today ? state.status : CrawlStatus.IDLE;
}

/** The page whose report finishes the keyword: min(totalPages, maxPages), or maxPages while unknown. */
export function lastPage(totalPages: number, maxPages: number): number {
  return totalPages > 0 ? Math.min(totalPages, maxPages) : maxPages;
}

/** Whether a FAILED keyword may be claimed again today. */
export function hasRetriesLeft(state: Pick<KeywordState, "retryCount">, source: Pick<SourceRules, "maxRetries">) {
  return state.retryCount < source.maxRetries;
}

/** Whether a CRAWLING keyword has gone without a heartbeat for longer than the source allows. */
export function isStale(state: Pick<KeywordState, "heartbeatAt">, source: Pick<SourceRules, "staleAfterSeconds">, now: Date) {
  const last = state.heartbeatAt?.getTime() ?? 0;
  return now.getTime() - last > source.staleAfterSeconds * 1000;
}

/**
 * Is `token` the live lease? A report needs it. When it is not, say why in a way the crawler can
 * act on: LEASE_LOST = the keyword was taken from you (swept, released, reset, another crawler
 * holds it, or the crawl day ended) — drop it; INVALID_TRANSITION = the keyword is not in a
 * state this operation applies to.
 */
function checkLease(state: KeywordState, token: string, status: CrawlStatus): Refused | null {
  const mine = state.leaseToken !== null && token === state.leaseToken;
  if (status === CrawlStatus.CRAWLING) {
    return mine ? null : refuse(ErrorCode.LEASE_LOST, "this keyword is leased to another crawler");
  }
  if (mine && (status === CrawlStatus.PARTIAL || status === CrawlStatus.IDLE)) {
    return refuse(
      ErrorCode.LEASE_LOST,
      status === CrawlStatus.PARTIAL
        ? "the lease was revoked (no heartbeat within staleAfterSeconds, or released); claim again to resume"
        : "the lease ended with its crawl day or the keyword was reset",
    );
  }
  return refuse(ErrorCode.INVALID_TRANSITION, `keyword is ${status}, not CRAWLING`);
}

function accepted(from: CrawlStatus, to: CrawlStatus, patch: KeywordPatch, reason: string, extra?: Partial<Accepted>): Accepted {
  const d: Accepted = { ok: true, from, to, patch: { ...patch, status: to }, reason };
  return extra ? Object.assign(d, extra) : d;
}

/** An idempotent replay (a retried request whose first answer was lost): nothing is written. */
const replayed = (from: CrawlStatus): Accepted => ({ ok: true, from, to: from, patch: {}, reason: "replay" });

/** Decide what `event` does to a keyword in `state`. */
export function decide(state: KeywordState, source: SourceRules, event: CrawlEventInput): Decision {
  const from = effectiveStatus(state, event.today);
  // (accepted / replayed are module functions, not closures made at every call: decide runs for
  // every keyword written.)

  switch (event.type) {
    case "CLAIM": {
      const lease = {
        crawlerId: event.crawlerId,
        leaseToken: event.leaseToken,
        lastRequestedAt: event.now,
        heartbeatAt: event.now,
      };
      if (from === CrawlStatus.IDLE) {
        // A fresh claim starts the day over: counters belong to the crawl day.
        return accepted(from, 
          CrawlStatus.CRAWLING,
          {
            ...lease,
            crawlDate: event.today,
            crawlStartedAt: event.now,
            lastCompletedPage: 0,
            totalPages: 0,
            jobsFound: 0,
            pagesCrawled: 0,
            errorMessage: "",
            retryCount: 0,
          },
          "claim",
          { startPage: 1, resumed: false },
        );
      }
      if (from === CrawlStatus.PARTIAL || (from === CrawlStatus.FAILED && hasRetriesLeft(state, source))) {
        // maxPages may have been lowered since: with nothing left to fetch, finish instead of leasing.
        if (state.lastCompletedPage >= lastPage(state.totalPages, source.maxPages)) {
          return accepted(from, CrawlStatus.COMPLETED, { heartbeatAt: event.now }, "no pages left");
        }
        const startPage = state.lastCompletedPage + 1;
        const retry = from === CrawlStatus.FAILED;
        return accepted(from, 
          CrawlStatus.CRAWLING,
          { ...lease, crawlStartedAt: event.now, ...(retry ? { retryCount: state.retryCount + 1 } : {}) },
          retry ? "retry" : "resume",
          { startPage, resumed: startPage > 1 },
        );
      }
      if (from === CrawlStatus.FAILED) {
        return refuse(ErrorCode.INVALID_TRANSITION, `keyword FAILED and has used its ${source.maxRetries} retries today`);
      }
      return refuse(ErrorCode.INVALID_TRANSITION, `keyword is ${from}; only IDLE, PARTIAL and FAILED keywords can be claimed`);
    }

    case "PROGRESS": {
      const { page, jobsOnPage } = event;
      const totalPages = event.totalPages ?? 0;
      if (!Number.isInteger(page) || page < 1) return refuse(ErrorCode.BAD_USER_INPUT, "page must be an integer ≥ 1");
      if (page > source.maxPages) {
        return refuse(ErrorCode.BAD_USER_INPUT, `page ${page} is beyond this source's maxPages (${source.maxPages})`);
      }
      if (!Number.isInteger(totalPages) || totalPages < 0 || totalPages > MAX_TOTAL_PAGES) {
        return refuse(ErrorCode.BAD_USER_INPUT, `totalPages must be an integer from 0 (unknown) to ${MAX_TOTAL_PAGES}`);
      }
      if (totalPages > 0 && page > totalPages) {
        return refuse(ErrorCode.BAD_USER_INPUT, `page ${page} is beyond the reported totalPages (${totalPages})`);
      }
      if (!Number.isInteger(jobsOnPage) || jobsOnPage < 0 || jobsOnPage > MAX_JOBS_PER_PAGE) {
        return refuse(ErrorCode.BAD_USER_INPUT, `jobsFound must be an integer from 0 to ${MAX_JOBS_PER_PAGE}`);
      }
      // A retried report of the page that completed the keyword (its answer was lost) is a no-op.
      const isReplay =
        from === CrawlStatus.COMPLETED &&
        state.leaseToken === event.leaseToken &&
        page <= state.lastCompletedPage &&
        event.previousJobsOnPage === jobsOnPage;
      if (isReplay) return replayed(from);
      const leaseError = checkLease(state, event.leaseToken, from);
      if (leaseError) return leaseError;

      const known = totalPages > 0 ? totalPages : state.totalPages;
      const lastCompletedPage = Math.max(state.lastCompletedPage, page);
      const patch: KeywordPatch = {
        lastCompletedPage,
        totalPages: known,
        jobsFound: state.jobsFound - (event.previousJobsOnPage ?? 0) + jobsOnPage,
        pagesCrawled: state.pagesCrawled + (event.previousJobsOnPage === null ? 1 : 0),
        heartbeatAt: event.now,
      };
      const pageReport = { page, jobsFound: jobsOnPage };
      if (lastCompletedPage >= lastPage(known, source.maxPages)) {
        return accepted(from, CrawlStatus.COMPLETED, patch, "last page", { pageReport });
      }
      return accepted(from, CrawlStatus.CRAWLING, patch, "progress", { pageReport });
    }

    case "HEARTBEAT": {
      const leaseError = checkLease(state, event.leaseToken, from);
      if (leaseError) return leaseError;
      return accepted(from, CrawlStatus.CRAWLING, { heartbeatAt: event.now }, "heartbeat");
    }

    case "COMPLETE":
    case "FAIL": {
      const to = event.type === "COMPLETE" ? CrawlStatus.COMPLETED : CrawlStatus.FAILED;
      // The same crawler repeating its own completion (a retry after a timeout) is a no-op.
      if (from === to && state.leaseToken === event.leaseToken) return replayed(from);
      const leaseError = checkLease(state, event.leaseToken, from);
      if (leaseError) return leaseError;
      if (event.type === "COMPLETE") return accepted(from, to, { heartbeatAt: event.now }, "complete");
      return accepted(from, to, { heartbeatAt: event.now, errorMessage: event.errorMessage }, "fail");
    }

    case "RELEASE": {
      if (from === CrawlStatus.PARTIAL && state.leaseToken === event.leaseToken) return replayed(from);
      const leaseError = checkLease(state, event.leaseToken, from);
      if (leaseError) return leaseError;
      return accepted(from, CrawlStatus.PARTIAL, { heartbeatAt: event.now }, "release");
    }

    case "STALE": {
      if (from !== CrawlStatus.CRAWLING) return refuse(ErrorCode.INVALID_TRANSITION, `keyword is ${from}, not CRAWLING`);
      if (!isStale(state, source, event.now)) {
        return refuse(ErrorCode.INVALID_TRANSITION, "keyword has a recent heartbeat");
      }
      return accepted(from, CrawlStatus.PARTIAL, {}, "stale");
    }

    case "ROLLOVER": {
      if (state.status === CrawlStatus.IDLE || state.crawlDate === event.today) {
        return refuse(ErrorCode.INVALID_TRANSITION, "keyword already belongs to this crawl day or is IDLE");
      }
      // The stored state is yesterday's; reading it already says IDLE. This makes it so on disk.
      return { ok: true, from: state.status, to: CrawlStatus.IDLE, patch: { status: CrawlStatus.IDLE }, reason: "rollover" };
    }

    case "RESET": {
      return {
        ok: true,
        from,
        to: CrawlStatus.IDLE,
        patch: {
          status: CrawlStatus.IDLE,
          crawlDate: null,
          // Out of today's requests too, so the claim's scan of today's requests never skips it.
          lastRequestedAt: null,
          lastCompletedPage: 0,
          totalPages: 0,
          jobsFound: 0,
          pagesCrawled: 0,
          crawlStartedAt: null,
          heartbeatAt: null,
          crawlerId: "",
          errorMessage: "",
          retryCount: 0,
        },
        reason: "reset",
        dropPageReports: true,
      };
    }

    case "FORCE_RELEASE": {
      if (from !== CrawlStatus.CRAWLING) return refuse(ErrorCode.INVALID_TRANSITION, `keyword is ${from}, not CRAWLING`);
      // The lease token stays: the crawler's late reports are then told LEASE_LOST.
      return accepted(from, CrawlStatus.PARTIAL, {}, "released by operator");
    }

    case "RETRY": {
      if (from !== CrawlStatus.FAILED) return refuse(ErrorCode.INVALID_TRANSITION, `keyword is ${from}, not FAILED`);
      // PARTIAL is claimed first and resumes after the last good page; retryCount is kept, so a
      // further failure does not earn automatic retries the source no longer allows.
      return accepted(from, CrawlStatus.PARTIAL, { errorMessage: "" }, "retried by operator");
    }
  }
}
