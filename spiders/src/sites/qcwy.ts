// 51job (前程无忧): GET /api/job/search-pc?keyword&jobArea&pageNum&pageSize… →
// { status: "1", resultbody: { job: { totalCount, items[] } } }. Blocks: an Aliyun WAF / slider
// HTML page (HTTP 200), or status ≠ "1" with a message about 验证/滑块/登录.
import { BadPage, chinaTime, excerpt, looksLikeHtml, parseJson, type SiteAdapter, SiteBlocked, str } from "./site.ts";

export const QCWY_CITIES: Record<string, string> = {
  全国: "000000",
  北京: "010000",
  上海: "020000",
  广州: "030200",
  深圳: "040000",
  杭州: "080200",
  成都: "090200",
};

/** 51job serves at most 50 pages of a search. */
export const QCWY_MAX_PAGES = 50;

export const qcwy: SiteAdapter = {
  id: "qcwy",
  pageSize: 20,
  request(baseUrl, kw, page) {
    const q = new URLSearchParams({
      api_key: "51job",
      timestamp: String(Date.now()),
      keyword: kw.job,
      searchType: "2",
      jobArea: QCWY_CITIES[kw.city] ?? kw.city,
      sortType: "0",
      pageNum: String(page),
      pageSize: String(this.pageSize),
      source: "1",
      scene: "7",
    });
    return { url: `${baseUrl}/api/job/search-pc?${q}`, init: { headers: { accept: "application/json", "from-domain": "51job_web" } } };
  },
  parse(status, body, page) {
    if (looksLikeHtml(body)) throw new SiteBlocked(`qcwy: HTML instead of JSON (WAF/slider/login): ${excerpt(body)}`);
    if (status !== 200) throw new BadPage(`qcwy: HTTP ${status}`);
    const json = parseJson(body);
    if (str(json?.status) !== "1") {
      const msg = `qcwy: status ${str(json?.status) || "?"} ${str(json?.message)}`;
      if (/验证|滑块|登录|异常/.test(str(json?.message))) throw new SiteBlocked(msg);
      throw new BadPage(msg);
    }
    const job = json.resultbody?.job;
    if (!job || !Array.isArray(job.items) || !Number.isFinite(Number(job.totalCount))) {
      throw new BadPage(`qcwy: resultbody.job without items/totalCount: ${excerpt(body)}`);
    }
    const total = Number(job.totalCount);
    const totalPages = Math.min(Math.ceil(total / this.pageSize), QCWY_MAX_PAGES);
    // Empty items while the count says there is more is 51job throttling, not the end.
    if (job.items.length === 0 && page <= totalPages) throw new BadPage(`qcwy: empty page ${page} of ${totalPages} (throttled)`);
    const postings = job.items
      .filter((j: any) => j && str(j.jobId))
      .map((j: any) => ({
        externalId: str(j.jobId),
        title: str(j.jobName) || "(untitled)",
        company: str(j.companyName) || str(j.fullCompanyName),
        city: str(j.jobAreaLevelDetail?.cityString) || str(j.jobAreaString).split("·")[0],
        salary: str(j.provideSalaryString),
        url: str(j.jobHref).split("?")[0],
        publishedAt: chinaTime(j.issueDateString),
      }));
    return { postings, totalPages: Math.max(totalPages, total === 0 ? page : 0), last: page >= totalPages };
  },
};
