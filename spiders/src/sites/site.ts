// What every site adapter provides: the request for a page of a search, and a parser that turns
// the site's answer into postings plus "is this the last page" — or a typed error.
import type { JobPostingInput } from "../gql/graphql.ts";

export type SiteId = "boss" | "qcwy" | "zhilian";

export interface SearchKeyword {
  city: string;
  job: string;
}

export interface PageRequest {
  url: string;
  init: RequestInit;
}

export interface ParsedPage {
  postings: JobPostingInput[];
  /** Pages the site has for this search, when it says (0 = unknown). */
  totalPages: number;
  /** No page after this one. */
  last: boolean;
}

export interface SiteAdapter {
  id: SiteId;
  /** Postings the adapter asks for per page. */
  pageSize: number;
  request(baseUrl: string, kw: SearchKeyword, page: number): PageRequest;
  /** Throws SiteBlocked (ban/captcha/login), BadPage (malformed or refused answer). */
  parse(status: number, body: string, page: number): ParsedPage;
}

/** The site refuses this client (ban, captcha, login wall): retrying soon will not help. */
export class SiteBlocked extends Error {
  override name = "SiteBlocked";
}

/** An answer that is not a usable page: HTTP error, truncated or malformed JSON, throttling. Retryable. */
export class BadPage extends Error {
  override name = "BadPage";
}

/** JSON.parse that reports truncated/malformed bodies as BadPage. */
export function parseJson(body: string): any {
  try {
    return JSON.parse(body);
  } catch (e) {
    throw new BadPage(`malformed JSON (${(e as Error).message}; ${body.length} bytes)`);
  }
}

/** An HTML page where JSON was expected: WAF challenges, captchas and login walls look like this. */
export const looksLikeHtml = (body: string) => /^\s*</.test(body);

/** First 120 characters of a body, for error messages. */
export const excerpt = (body: string) => body.replace(/\s+/g, " ").slice(0, 120);

/** "YYYY-MM-DD HH:mm:ss" in China time → ISO; null when absent or not a date. */
export function chinaTime(text: unknown): string | null {
  if (typeof text !== "string" || !/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/.test(text)) return null;
  const [d, t = "00:00:00"] = text.split(" ");
  const iso = new Date(`${d}T${t.length === 5 ? `${t}:00` : t}+08:00`);
  return Number.isNaN(iso.getTime()) ? null : iso.toISOString();
}

export const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
