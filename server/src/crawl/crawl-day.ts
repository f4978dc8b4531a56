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

const starts = new Map<string, Date>();

/**
 * The first instant of crawl day `day` in `tz` (usually its 00:00; the first moment after a DST gap
 * when midnight does not exist). Found by bisection on crawlDay, which only moves forward in time.
 */
export function dayStart(day: string, tz: string): Date {
  const key = `${tz} ${day}`;
  const cached = starts.get(key);
  if (cached) return cached;
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  let lo = utcMidnight - 15 * 3600_000; // before the day starts anywhere (offsets reach +14:00)
  let hi = utcMidnight + 13 * 3600_000; // the day has started everywhere (offsets reach -12:00)
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (crawlDay(new Date(mid), tz) < day) lo = mid;
    else hi = mid;
  }
  const start = new Date(hi);
  if (starts.size > 1000) starts.clear();
  starts.set(key, start);
  return start;
}

/** The calendar day after `day` (YYYY-MM-DD). */
/** The calendar day `n` days after `day` (before it when n < 0), YYYY-MM-DD. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86400_000).toISOString().slice(0, 10);
}

export function nextDay(day: string): string {
  return addDays(day, 1);
}

export class CrawlCalendar {
  /** The crawl day last asked about and the instants it spans, [from, to). */
  private span = { day: "", from: 0, to: 0 };

  constructor(
    readonly clock: Clock,
    readonly timeZone: string,
  ) {}
  now(): Date {
    return this.clock.now();
  }
  today(): string {
    // Every event asks; formatting a date in a time zone costs microseconds, a comparison nothing.
    const t = this.clock.now().getTime();
    if (t >= this.span.from && t < this.span.to) return this.span.day;
    const day = crawlDay(new Date(t), this.timeZone);
    this.span = { day, from: dayStart(day, this.timeZone).getTime(), to: dayStart(nextDay(day), this.timeZone).getTime() };
    return day;
  }
  /** The first instant of crawl day `day` (default today). */
  startOf(day = this.today()): Date {
    return dayStart(day, this.timeZone);
  }
}
