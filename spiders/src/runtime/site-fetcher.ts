// Fetches one page of a search from a site: politely (at most SITE_RATE_PER_SEC requests per
// second per process, p-throttle), with a timeout, and with bounded retries (backoff + jitter) on
// 5xx, timeouts, network errors and malformed pages. A ban/captcha is not retried: it is final.
import pThrottle from "p-throttle";
import { type Backoff, retry } from "./backoff.ts";
import { BadPage, type ParsedPage, type SearchKeyword, type SiteAdapter } from "../sites/site.ts";

export interface SiteFetcherOptions extends Backoff {
  adapter: SiteAdapter;
  baseUrl: string;
  ratePerSec: number;
  timeoutMs: number;
  retries: number;
  onRetry?: (kw: SearchKeyword, page: number, e: Error, attempt: number) => void;
}

/** Thrown when a page kept failing for every retry; the keyword FAILs with its message. */
export class PageFailed extends Error {
  override name = "PageFailed";
}

export class SiteFetcher {
  private readonly throttled: <T>(fn: () => Promise<T>) => Promise<T>;

  constructor(private readonly opts: SiteFetcherOptions) {
    // One request slot every 1/rate s; a burst of up to `rate` within a second is allowed.
    const perSecond = Math.max(1, Math.round(opts.ratePerSec));
    const throttle = pThrottle({ limit: perSecond, interval: Math.round((1000 * perSecond) / opts.ratePerSec) });
    this.throttled = throttle(<T>(fn: () => Promise<T>) => fn()) as <T>(fn: () => Promise<T>) => Promise<T>;
  }

  private async attempt(kw: SearchKeyword, page: number, signal: AbortSignal): Promise<ParsedPage> {
    const { adapter, baseUrl, timeoutMs } = this.opts;
    const req = adapter.request(baseUrl, kw, page);
    const res = await this.throttled(async () => {
      signal.throwIfAborted();
      // One controller per attempt, unhooked afterwards: the caller's signal lives as long as the
      // keyword, and listeners left on it would pile up page after page.
      const attempt = new AbortController();
      const onAbort = () => attempt.abort(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        attempt.abort();
      }, timeoutMs);
      try {
        const r = await fetch(req.url, { ...req.init, signal: attempt.signal });
        return { status: r.status, body: await r.text() };
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        throw new BadPage(timedOut ? `timed out after ${timeoutMs} ms` : `network error: ${String((e as Error).cause ?? (e as Error).message)}`);
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      }
    });
    return adapter.parse(res.status, res.body, page);
  }

  /** The parsed page, or SiteBlocked (ban), PageFailed (retries spent), or the abort reason. */
  async fetch(kw: SearchKeyword, page: number, signal: AbortSignal): Promise<ParsedPage> {
    try {
      return await retry(() => this.attempt(kw, page, signal), {
        minMs: this.opts.minMs,
        maxMs: this.opts.maxMs,
        retries: this.opts.retries,
        signal,
        permanent: (e) => !(e instanceof BadPage),
        onRetry: (e, attempt) => this.opts.onRetry?.(kw, page, e, attempt),
      });
    } catch (e) {
      // SiteBlocked and the abort reason pass through as they are.
      if (e instanceof BadPage) throw new PageFailed(`page ${page} failed ${this.opts.retries + 1} times, last: ${e.message}`);
      throw e;
    }
  }
}
