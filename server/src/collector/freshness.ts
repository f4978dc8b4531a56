// Freshness: a record is fresh when its day (publish date, else collect time) is within
// `filterDays` of today's crawl day (CRAWL_TZ). Days compare as YYYY-MM-DD strings.

const DAY_MS = 86_400_000;

/**
 * The calendar day of an upstream date: `YYYY-MM-DD`, `YYYYMMDD`, or either followed by a time
 * (`YYYY-MM-DD HH:mm:ss`). null for anything else, including impossible dates (2026-02-30).
 */
export function parseDay(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})(?:$|[ T])/.exec(String(value).trim());
  if (!m) return null;
  const [, y, mo, d] = m;
  const iso = `${y}-${mo}-${d}`;
  const t = Date.parse(`${iso}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().startsWith(iso) ? iso : null;
}

/** The oldest fresh day: `today` minus `filterDays` calendar days. */
export function cutoffDay(today: string, filterDays: number): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) - filterDays * DAY_MS).toISOString().slice(0, 10);
}

/** Fresh: dated on or after the cut-off (a date in the future counts as fresh). Undated: stale. */
export const isFresh = (day: string | null, cutoff: string) => day !== null && day >= cutoff;
