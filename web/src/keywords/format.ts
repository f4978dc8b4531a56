// How a keyword row reads: its page progress and how long ago its crawler was last heard from.
import type { KeywordRowFragment } from "../gql/graphql.ts";

/** lastCompletedPage out of the pages it will crawl: min(totalPages, maxPages), or maxPages while unknown. */
export function pageProgress(kw: Pick<KeywordRowFragment, "lastCompletedPage" | "totalPages" | "source">) {
  const of = kw.totalPages > 0 ? Math.min(kw.totalPages, kw.source.maxPages) : kw.source.maxPages;
  const done = Math.min(kw.lastCompletedPage, of);
  return { done, of, percent: of > 0 ? Math.round((done / of) * 100) : 0 };
}

/** "—", "12s", "4m 05s", "3h 02m", "2d 1h". */
export function age(since: string | null, now: number): string {
  if (!since) return "—";
  const s = Math.max(0, Math.floor((now - new Date(since).getTime()) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Split what an operator pastes (lines, commas, 、 or ，) into distinct trimmed entries. */
export function splitList(text: string): string[] {
  return [...new Set(text.split(/[\n,，、;；]+/).map((s) => s.trim()).filter(Boolean))];
}
