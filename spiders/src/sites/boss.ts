// Boss直聘: GET /wapi/zpgeek/search/joblist.json?query&city&page&pageSize&scene=1 →
// { code: 0, zpData: { hasMore, totalCount, jobList[] } }. Blocks stay HTTP 200 with code ≠ 0
// (37 = 环境存在异常) or arrive as an HTML security-check / login page.
import { BadPage, excerpt, looksLikeHtml, parseJson, type SiteAdapter, SiteBlocked, str } from "./site.ts";

/** Boss's 9-digit city codes (public scrapers agree); other names are sent as they are. */
export const BOSS_CITIES: Record<string, string> = {
  全国: "100010000",
  北京: "101010100",
  上海: "101020100",
  广州: "101280100",
  深圳: "101280600",
  杭州: "101210100",
  成都: "101270100",
};

/** Codes that mean "you are blocked / logged out", per the scrapers that met them. */
const BLOCK_CODES = new Set([5, 7, 9, 31, 32, 35, 36, 37, 120, 121, 122, 1011, 5002, 5003, 5004, 5012]);

export const boss: SiteAdapter = {
  id: "boss",
  pageSize: 15,
  request(baseUrl, kw, page) {
    const q = new URLSearchParams({
      scene: "1",
      query: kw.job,
      city: BOSS_CITIES[kw.city] ?? kw.city,
      page: String(page),
      pageSize: String(this.pageSize),
    });
    return {
      url: `${baseUrl}/wapi/zpgeek/search/joblist.json?${q}`,
      init: { headers: { accept: "application/json", "x-requested-with": "XMLHttpRequest" } },
    };
  },
  parse(status, body, page) {
    if (looksLikeHtml(body)) throw new SiteBlocked(`boss: HTML instead of JSON (security check or login): ${excerpt(body)}`);
    if (status !== 200) throw new BadPage(`boss: HTTP ${status}`);
    const json = parseJson(body);
    if (typeof json?.code !== "number") throw new BadPage(`boss: no code in answer: ${excerpt(body)}`);
    if (json.code !== 0) {
      const msg = `boss: code ${json.code} ${str(json.message)}`;
      if (BLOCK_CODES.has(json.code) || /异常|频繁|验证|滑块|登录/.test(str(json.message))) throw new SiteBlocked(msg);
      throw new BadPage(msg);
    }
    const z = json.zpData;
    if (!z || !Array.isArray(z.jobList) || typeof z.hasMore !== "boolean") {
      throw new BadPage(`boss: zpData without jobList/hasMore: ${excerpt(body)}`);
    }
    const postings = z.jobList
      .filter((j: any) => j && typeof j.encryptJobId === "string" && j.encryptJobId)
      .map((j: any) => ({
        externalId: j.encryptJobId,
        title: str(j.jobName) || "(untitled)",
        company: str(j.brandName),
        city: str(j.cityName),
        salary: str(j.salaryDesc),
        url: `https://www.zhipin.com/job_detail/${encodeURIComponent(j.encryptJobId)}.html`,
        publishedAt: typeof j.lastModifyTime === "number" ? new Date(j.lastModifyTime).toISOString() : null,
      }));
    const last = !z.hasMore || postings.length === 0;
    // Boss only says whether more follows; the count it reports exceeds what it serves.
    return { postings, totalPages: last ? page : 0, last };
  },
};
