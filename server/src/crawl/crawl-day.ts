// The crawl day: the calendar day in CRAWL_TZ. Time comes from an injectable clock so tests can
// cross midnight without waiting for it.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(at: Date | string): void {
    this.current = new Date(at);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** YYYY-MM-DD of `at` in time zone `tz`. */
export function crawlDay(at: Date, tz: string): string {
  let f = formatters.get(tz);
  if (!f) {
    // en-CA formats dates as YYYY-MM-DD.
    f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
    formatters.set(tz, f);
  }
  return f.format(at);
}

export class CrawlCalendar {
  constructor(
    readonly clock: Clock,
    readonly timeZone: string,
  ) {}
  now(): Date {
    return this.clock.now();
  }
  today(): string {
    return crawlDay(this.clock.now(), this.timeZone);
  }
}
