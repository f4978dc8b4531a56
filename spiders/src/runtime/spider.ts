// The crawl loop shared by every site: claim → fetch pages from startPage → per page submit the
// postings and report progress (also the heartbeat) → complete, or FAIL with the error, or release
// on a graceful stop. LEASE_LOST drops the keyword at once: another crawler owns it now.
import type { Logger } from "pino";
import {
  ClaimKeywordsDocument,
  HeartbeatDocument,
  type ClaimKeywordsMutation,
  ReleaseKeywordDocument,
  ReportCrawlCompleteDocument,
  ReportPageProgressDocument,
  SubmitJobPostingsDocument,
} from "../gql/graphql.ts";
import type { SiteId } from "../sites/site.ts";
import { SiteBlocked } from "../sites/site.ts";
import { ApiError, type ServerClient } from "./server-client.ts";
import { PageFailed, type SiteFetcher } from "./site-fetcher.ts";

type Claim = ClaimKeywordsMutation["claimKeywords"][number];

/** What a progress display needs to know. */
export type SpiderEvent =
  | { type: "start"; keywordId: string; label: string; startPage: number; resumed: boolean }
  | { type: "page"; keywordId: string; label: string; page: number; lastPage: number; jobs: number }
  | { type: "end"; keywordId: string; label: string; outcome: "COMPLETED" | "FAILED" | "RELEASED" | "DROPPED" | "ERROR"; detail?: string };

export interface SpiderOptions {
  site: SiteId;
  crawlerId: string;
  client: ServerClient;
  fetcher: SiteFetcher;
  /** Keywords in flight at once. */
  concurrency: number;
  /** Exit when nothing is left to claim (else poll every pollMs until stopped). */
  once: boolean;
  pollMs: number;
  /** The source's maxPages, for display only (the server decides). */
  maxPages?: number;
  /** While a page takes longer than this (slow site, retries), send heartbeats at this interval. */
  heartbeatMs?: number;
  log: Logger;
  onEvent?: (e: SpiderEvent) => void;
}

export interface SpiderTotals {
  pages: number;
  jobs: number;
  completed: number;
  failed: number;
  released: number;
  dropped: number;
  errors: number;
}

/** LEASE_LOST / INVALID_TRANSITION: the keyword is not ours (any more). */
const notOurs = (e: unknown) => e instanceof ApiError && (e.code === "LEASE_LOST" || e.code === "INVALID_TRANSITION");

export class Spider {
  readonly totals: SpiderTotals = { pages: 0, jobs: 0, completed: 0, failed: 0, released: 0, dropped: 0, errors: 0 };
  private stopping = false;
  /** The last claim failed (the server stayed unreachable past SERVER_RETRY_MS, or refused it). */
  claimFailed = false;
  private onStop!: () => void;
  /** Resolves on stop: ends the idle wait. */
  private readonly stopped = new Promise<void>((r) => (this.onStop = r));
  /** Crawls in flight by lease token, each with the controller that cancels its site request. */
  private readonly active = new Map<string, { done: Promise<void>; cancel: AbortController }>();

  constructor(private readonly o: SpiderOptions) {}

  /** Graceful stop: the page in flight is dropped (or, once fetched, reported), keywords released. */
  stop() {
    if (this.stopping) return;
    this.stopping = true;
    this.onStop();
    for (const a of this.active.values()) a.cancel.abort(new Error("spider stopping"));
  }

  async run(): Promise<SpiderTotals> {
    const { o } = this;
    while (!this.stopping) {
      const free = o.concurrency - this.active.size;
      let claimed = 0;
      // An empty claim means "nothing left" only when it was asked with none of our keywords in
      // flight: one we were finishing meanwhile (FAILED with retries left, released) may have
      // become claimable after the server read the candidates.
      let askedIdle = false;
      if (free > 0) {
        askedIdle = this.active.size === 0;
        try {
          const d = await o.client.request(ClaimKeywordsDocument, { source: o.site, crawlerId: o.crawlerId, limit: free });
          claimed = d.claimKeywords.length;
          for (const c of d.claimKeywords) this.track(c);
        } catch (e) {
          this.totals.errors++;
          this.claimFailed = true;
          o.log.error({ err: e }, "claim failed");
          if (o.once && this.active.size === 0) break;
          continue;
        }
        this.claimFailed = false;
      }
      if (o.once && claimed === 0 && this.active.size === 0) {
        if (askedIdle) break;
        continue; // asked while a keyword of ours was finishing: ask again
      }
      if (this.active.size >= o.concurrency || claimed === 0) await this.idle(claimed === 0 && this.active.size === 0);
    }
    await Promise.allSettled([...this.active.values()].map((a) => a.done));
    return this.totals;
  }

  /** Wait for a free slot (a keyword ends) or, with nothing to do, for the poll interval. */
  private async idle(poll: boolean) {
    const waits: Promise<unknown>[] = [...this.active.values()].map((a) => a.done);
    let timer: NodeJS.Timeout | undefined;
    if (poll || waits.length < this.o.concurrency) waits.push(new Promise((r) => (timer = setTimeout(r, this.o.pollMs))));
    await Promise.race([...waits, this.stopped]);
    clearTimeout(timer);
  }

  private track(c: Claim) {
    // Keyed by lease, not keyword: a keyword reset and claimed again while its old lease is still
    // being dropped is a second, separate crawl.
    const cancel = new AbortController();
    if (this.stopping) cancel.abort(new Error("spider stopping"));
    const done = this.crawl(c, cancel).finally(() => this.active.delete(c.leaseToken));
    this.active.set(c.leaseToken, { done, cancel });
  }

  private async crawl(c: Claim, cancel: AbortController): Promise<void> {
    const { o } = this;
    const kw = c.keyword;
    const label = `${kw.city}/${kw.job}`;
    const lease = { keywordId: kw.id, leaseToken: c.leaseToken };
    const log = o.log.child({ keywordId: kw.id, keyword: label });
    const end = (outcome: Extract<SpiderEvent, { type: "end" }>["outcome"], detail?: string) =>
      o.onEvent?.({ type: "end", keywordId: kw.id, label, outcome, detail });
    o.onEvent?.({ type: "start", keywordId: kw.id, label, startPage: c.startPage, resumed: c.resumed });
    log.info({ startPage: c.startPage, resumed: c.resumed }, "claimed");
    let lastPage = kw.totalPages > 0 ? Math.min(kw.totalPages, o.maxPages ?? kw.totalPages) : (o.maxPages ?? 0);
    try {
      for (let page = c.startPage; ; page++) {
        if (this.stopping) return await this.release(lease, log, end);
        let parsed;
        const beat = this.heartbeat(lease, cancel, log);
        try {
          parsed = await o.fetcher.fetch({ city: kw.city, job: kw.job }, page, cancel.signal);
        } catch (e) {
          if (e instanceof SiteBlocked || e instanceof PageFailed) return await this.fail(lease, page, e, log, end);
          // Cancelled: by a refused heartbeat (the reason is its LEASE_LOST) or by stop().
          if (cancel.signal.aborted && notOurs(cancel.signal.reason)) throw cancel.signal.reason;
          if (cancel.signal.aborted && this.stopping) return await this.release(lease, log, end);
          throw e;
        } finally {
          clearInterval(beat);
        }
        // Postings first, then the report that counts them: a report never counts postings the
        // server has not stored, and a retry of either is idempotent.
        const sub = await o.client.request(SubmitJobPostingsDocument, { ...lease, page, postings: parsed.postings });
        const jobs = sub.submitJobPostings.accepted;
        const { reportPageProgress: k } = await o.client.request(ReportPageProgressDocument, {
          input: { ...lease, page, totalPages: parsed.totalPages || null, jobsFound: jobs },
        });
        this.totals.pages++;
        this.totals.jobs += jobs;
        if (k.totalPages > 0) lastPage = o.maxPages ? Math.min(k.totalPages, o.maxPages) : k.totalPages;
        o.onEvent?.({ type: "page", keywordId: kw.id, label, page, lastPage, jobs: k.jobsFound });
        log.info({ page, lastPage, jobsOnPage: jobs, jobsFound: k.jobsFound, created: sub.submitJobPostings.created }, "page done");
        if (k.status === "COMPLETED" || parsed.last) {
          if (k.status !== "COMPLETED") {
            await o.client.request(ReportCrawlCompleteDocument, { input: { ...lease, status: "COMPLETED" } });
          }
          this.totals.completed++;
          log.info({ jobsFound: k.jobsFound, pages: k.pagesCrawled }, "completed");
          return end("COMPLETED");
        }
      }
    } catch (e) {
      if (notOurs(e)) {
        this.totals.dropped++;
        log.warn({ err: (e as Error).message }, "lease lost: keyword dropped");
        return end("DROPPED", (e as Error).message);
      }
      // The server stayed unreachable past SERVER_RETRY_MS (or a bug): leave the keyword; the
      // stale sweep hands it to the next crawler, which resumes after the last reported page.
      this.totals.errors++;
      log.error({ err: e }, "keyword abandoned");
      return end("ERROR", (e as Error).message);
    }
  }

  /**
   * Heartbeats while a page is slow, so a healthy crawl of a slow site is never swept; a refused
   * heartbeat (LEASE_LOST) aborts the page at once.
   */
  private heartbeat(lease: { keywordId: string; leaseToken: string }, cancel: AbortController, log: Logger) {
    if (!this.o.heartbeatMs) return undefined;
    return setInterval(() => {
      this.o.client.request(HeartbeatDocument, lease).then(
        () => log.debug("heartbeat"),
        (e) => {
          if (notOurs(e)) cancel.abort(e);
          else log.warn({ err: (e as Error).message }, "heartbeat failed");
        },
      );
    }, this.o.heartbeatMs);
  }

  private async fail(lease: { keywordId: string; leaseToken: string }, page: number, e: Error, log: Logger, end: (o: "FAILED", d: string) => void) {
    const errorMessage = `page ${page}: ${e.message}`.slice(0, 2000);
    await this.o.client.request(ReportCrawlCompleteDocument, { input: { ...lease, status: "FAILED", errorMessage } });
    this.totals.failed++;
    log.warn({ page, error: e.message, blocked: e instanceof SiteBlocked }, "failed");
    end("FAILED", errorMessage);
  }

  private async release(lease: { keywordId: string; leaseToken: string }, log: Logger, end: (o: "RELEASED") => void) {
    await this.o.client.request(ReleaseKeywordDocument, lease);
    this.totals.released++;
    log.info("released (stopping)");
    end("RELEASED");
  }
}
