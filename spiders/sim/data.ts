// Deterministic job-board data: the same seed, site, city code and keyword always give the same
// result count and the same postings, so tests can ask the simulator for the truth.
import { createHash } from "node:crypto";

export type SiteId = "boss" | "qcwy" | "zhilian";
export const SITES: readonly SiteId[] = ["boss", "qcwy", "zhilian"];

/** How each simulated site pages, as the real ones do (see /work/shared/sites). */
export const SITE_PAGING: Record<SiteId, { pageSize: number; maxResults: number; maxTotal: number }> = {
  // Boss serves a ~300-result window whatever resCount says.
  boss: { pageSize: 15, maxResults: 300, maxTotal: 420 },
  // 51job caps at 50 pages of 20.
  qcwy: { pageSize: 20, maxResults: 1000, maxTotal: 1200 },
  zhilian: { pageSize: 20, maxResults: 2000, maxTotal: 400 },
};

/** Postings a keyword shares with every other keyword of its city (they test deduplication). */
export const SHARED_PER_CITY = 2;

export interface SimPosting {
  externalId: string;
  title: string;
  company: string;
  salaryMin: number;
  salaryMax: number;
  district: string;
  publishedAt: Date;
}

const hash = (...parts: (string | number)[]) => createHash("sha1").update(parts.join("|")).digest();
const num = (...parts: (string | number)[]) => hash(...parts).readUInt32BE(0);

const COMPANIES = ["青藤云帆科技", "星河数链信息技术", "松果演示网络", "蓝鲸示例科技", "远帆数智", "小橙示例网络", "云杉示例软件", "海纳演示信息技术", "橘光示例网络"];
const DISTRICTS = ["海淀区", "朝阳区", "浦东新区", "徐汇区", "南山区", "福田区", "天河区", "西湖区"];
const LEVELS = ["", "高级", "资深", "初级", "实习"];

/** Results the site reports for a search (its totalCount); some searches find nothing. */
export function totalCount(seed: string, site: SiteId, city: string, q: string): number {
  const h = num(seed, site, "total", city, q);
  if (h % 10 === 0) return 0;
  return (h >>> 4) % (SITE_PAGING[site].maxTotal + 1);
}

/** Results the site actually serves (Boss stops at its window). */
export function servedCount(seed: string, site: SiteId, city: string, q: string): number {
  return Math.min(totalCount(seed, site, city, q), SITE_PAGING[site].maxResults);
}

/** Pages the site serves for a search at a page size. */
export function pageCount(seed: string, site: SiteId, city: string, q: string, pageSize = SITE_PAGING[site].pageSize) {
  return Math.ceil(servedCount(seed, site, city, q) / pageSize);
}

/** The i-th (0-based) posting of a search. The first SHARED_PER_CITY are the city's shared ones. */
export function posting(seed: string, site: SiteId, city: string, q: string, i: number): SimPosting {
  const shared = i < SHARED_PER_CITY;
  const key = shared ? [seed, site, "shared", city, i] : [seed, site, "own", city, q, i];
  const h = hash(...key);
  const idNum = h.readUInt32BE(0);
  const externalId =
    site === "boss" ? `${h.toString("hex").slice(0, 24)}1nZ0sim~~` : site === "qcwy" ? String(100000000 + (idNum % 900000000)) : `CC${h.toString("hex").slice(0, 10).toUpperCase()}J${String(idNum).padStart(11, "0")}`;
  const min = 5 + (h[4]! % 30);
  return {
    externalId,
    title: `${LEVELS[h[5]! % LEVELS.length]}${shared ? "综合岗位" : q}`,
    company: COMPANIES[h[6]! % COMPANIES.length]!,
    salaryMin: min,
    salaryMax: min + 3 + (h[7]! % 15),
    district: DISTRICTS[h[8]! % DISTRICTS.length]!,
    publishedAt: new Date(Date.UTC(2026, 10, 1) + (h.readUInt32BE(9) % (28 * 86400)) * 1000),
  };
}

/** The postings of one page (1-based) at a page size; [] past the end. */
export function pagePostings(seed: string, site: SiteId, city: string, q: string, page: number, pageSize: number): SimPosting[] {
  const served = servedCount(seed, site, city, q);
  const from = (page - 1) * pageSize;
  const out: SimPosting[] = [];
  for (let i = from; i < Math.min(from + pageSize, served); i++) out.push(posting(seed, site, city, q, i));
  return out;
}

/**
 * What a perfect crawler stops with when the server allows `maxPages`: the postings of pages
 * 1…min(pages, maxPages), in order.
 */
export function truth(seed: string, site: SiteId, city: string, q: string, maxPages: number, pageSize = SITE_PAGING[site].pageSize) {
  const pages = Math.min(pageCount(seed, site, city, q, pageSize), maxPages);
  const postings: string[] = [];
  for (let p = 1; p <= pages; p++) for (const x of pagePostings(seed, site, city, q, p, pageSize)) postings.push(x.externalId);
  return { totalCount: totalCount(seed, site, city, q), pages, jobs: postings.length, postings };
}
