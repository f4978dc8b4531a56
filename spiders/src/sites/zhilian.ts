// 智联招聘: POST /c/i/search/positions {S_SOU_FULL_INDEX, S_SOU_WORK_CITY, pageIndex, pageSize} →
// { code: 200, data: { count, isEndPage, list[] } }. Blocks: EdgeOne JS challenge or TCaptcha
// "Security Verification" HTML (HTTP 200), or code 210 (未登录).
import { BadPage, chinaTime, excerpt, looksLikeHtml, parseJson, type SiteAdapter, SiteBlocked, str } from "./site.ts";

export const ZHILIAN_CITIES: Record<string, string> = {
  全国: "489",
  北京: "530",
  上海: "538",
  广州: "763",
  深圳: "765",
  杭州: "653",
  成都: "801",
};

export const zhilian: SiteAdapter = {
  id: "zhilian",
  pageSize: 20,
  request(baseUrl, kw, page) {
    const body = {
      S_SOU_FULL_INDEX: kw.job,
      S_SOU_WORK_CITY: ZHILIAN_CITIES[kw.city] ?? kw.city,
      pageIndex: page,
      pageSize: this.pageSize,
      eventScenario: "pcSearchedSouSearch",
      anonymous: 1,
      platform: 13,
    };
    return {
      url: `${baseUrl}/c/i/search/positions`,
      init: {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", "x-zp-platform": "13" },
        body: JSON.stringify(body),
      },
    };
  },
  parse(status, body, page) {
    if (looksLikeHtml(body)) throw new SiteBlocked(`zhilian: HTML instead of JSON (captcha/JS challenge/login): ${excerpt(body)}`);
    if (status !== 200) throw new BadPage(`zhilian: HTTP ${status}`);
    const json = parseJson(body);
    if (json?.code !== 200) {
      const msg = `zhilian: code ${str(json?.code) || "?"} ${str(json?.message)}`;
      if (json?.code === 210 || json?.code === 401 || json?.code === 403 || /登录|验证|滑块/.test(str(json?.message))) throw new SiteBlocked(msg);
      throw new BadPage(msg);
    }
    const d = json.data;
    if (!d || !Array.isArray(d.list) || !Number.isFinite(Number(d.count))) throw new BadPage(`zhilian: data without list/count: ${excerpt(body)}`);
    const count = Number(d.count);
    const totalPages = Math.ceil(count / this.pageSize);
    // Ad and live cards carry no number or name: not postings.
    const postings = d.list
      .filter((j: any) => j && str(j.number) && str(j.name))
      .map((j: any) => ({
        externalId: str(j.number),
        title: str(j.name),
        company: str(j.companyName),
        city: str(j.workCity),
        salary: str(j.salary60),
        url: `https://www.zhaopin.com/jobdetail/${encodeURIComponent(str(j.number))}.htm`,
        publishedAt: chinaTime(j.publishTime),
      }));
    const last = Number(d.isEndPage) === 1 || d.list.length === 0 || page >= totalPages;
    return { postings, totalPages: Math.max(totalPages, last ? page : 0), last };
  },
};
