// Each site adapter on pages recorded in the site's real JSON shape: a normal page, the last page,
// an empty result, a ban/captcha answer (a clear failure, never "0 jobs"), and malformed JSON.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { boss } from "./boss.ts";
import { qcwy } from "./qcwy.ts";
import { BadPage, SiteBlocked } from "./site.ts";
import { zhilian } from "./zhilian.ts";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

describe("boss", () => {
  it("builds the joblist.json request with the city code", () => {
    const r = boss.request("http://sim/boss", { city: "北京", job: "前端" }, 2);
    const u = new URL(r.url);
    expect(u.pathname).toBe("/boss/wapi/zpgeek/search/joblist.json");
    expect(Object.fromEntries(u.searchParams)).toMatchObject({ query: "前端", city: "101010100", page: "2", pageSize: "15", scene: "1" });
  });
  it("parses a normal page: postings by encryptJobId, more to come", () => {
    const p = boss.parse(200, fixture("boss-page.json"), 1);
    expect(p.last).toBe(false);
    expect(p.totalPages).toBe(0);
    expect(p.postings).toHaveLength(3);
    expect(p.postings[0]).toEqual({
      externalId: "0a1b2c3d4e5f60711nZ0synthJ1~",
      title: "前端开发工程师",
      company: "青藤云帆科技",
      city: "北京",
      salary: "15-25K·13薪",
      url: "https://www.zhipin.com/job_detail/0a1b2c3d4e5f60711nZ0synthJ1~.html",
      publishedAt: null,
    });
  });
  it("knows the last page by hasMore = false", () => {
    const p = boss.parse(200, fixture("boss-last.json"), 15);
    expect(p).toMatchObject({ last: true, totalPages: 15 });
    expect(p.postings).toHaveLength(2);
  });
  it("an empty result is a finished search with no postings", () => {
    expect(boss.parse(200, fixture("boss-empty.json"), 1)).toEqual({ postings: [], totalPages: 1, last: true });
  });
  it("code 37 and the security-check page are a ban, not an empty page", () => {
    expect(() => boss.parse(200, fixture("boss-ban.json"), 1)).toThrow(SiteBlocked);
    expect(() => boss.parse(200, fixture("boss-ban.json"), 1)).toThrow(/code 37 您的环境存在异常/);
    expect(() => boss.parse(200, fixture("boss-security-check.html"), 1)).toThrow(SiteBlocked);
  });
  it("malformed JSON, a missing hasMore and HTTP errors are retryable bad pages", () => {
    expect(() => boss.parse(200, fixture("boss-malformed.json"), 1)).toThrow(BadPage);
    expect(() => boss.parse(200, JSON.stringify({ code: 0, zpData: { jobList: [] } }), 1)).toThrow(BadPage);
    expect(() => boss.parse(503, "{}", 1)).toThrow(BadPage);
  });
});

describe("qcwy (51job)", () => {
  it("builds the search-pc request", () => {
    const u = new URL(qcwy.request("http://sim/qcwy", { city: "上海", job: "前端" }, 3).url);
    expect(u.pathname).toBe("/qcwy/api/job/search-pc");
    expect(Object.fromEntries(u.searchParams)).toMatchObject({ keyword: "前端", jobArea: "020000", pageNum: "3", pageSize: "20" });
  });
  it("parses a normal page with totalCount → pages", () => {
    const p = qcwy.parse(200, fixture("qcwy-page.json"), 1);
    expect(p).toMatchObject({ last: false, totalPages: 7 });
    expect(p.postings[0]).toEqual({
      externalId: "160000001",
      title: "前端开发工程师",
      company: "蓝鲸示例科技",
      city: "上海",
      salary: "1.5-2万·13薪",
      url: "https://jobs.51job.com/shanghai-pdxq/160000001.html",
      publishedAt: "2026-03-02T02:15:00.000Z",
    });
  });
  it("page ceil(totalCount / pageSize) is the last", () => {
    const p = qcwy.parse(200, fixture("qcwy-last.json"), 7);
    expect(p).toMatchObject({ last: true, totalPages: 7 });
    expect(p.postings).toHaveLength(2);
  });
  it("totalCount 0 is an empty, finished search", () => {
    expect(qcwy.parse(200, fixture("qcwy-empty.json"), 1)).toEqual({ postings: [], totalPages: 1, last: true });
  });
  it("the WAF slider page and a 滑块 refusal are bans", () => {
    expect(() => qcwy.parse(200, fixture("qcwy-ban.html"), 1)).toThrow(SiteBlocked);
    expect(() => qcwy.parse(200, fixture("qcwy-refused.json"), 1)).toThrow(/请完成滑块验证/);
  });
  it("malformed JSON and empty items before the last page are retryable", () => {
    expect(() => qcwy.parse(200, fixture("qcwy-malformed.json"), 1)).toThrow(BadPage);
    const throttled = JSON.stringify({ status: "1", resultbody: { job: { totalCount: 137, items: [] } } });
    expect(() => qcwy.parse(200, throttled, 2)).toThrow(/throttled/);
  });
});

describe("zhilian", () => {
  it("builds the positions POST", () => {
    const r = zhilian.request("http://sim/zhilian", { city: "深圳", job: "前端" }, 2);
    expect(new URL(r.url).pathname).toBe("/zhilian/c/i/search/positions");
    expect(r.init.method).toBe("POST");
    expect(JSON.parse(String(r.init.body))).toMatchObject({ S_SOU_FULL_INDEX: "前端", S_SOU_WORK_CITY: "765", pageIndex: 2, pageSize: 20 });
  });
  it("parses a normal page", () => {
    const p = zhilian.parse(200, fixture("zhilian-page.json"), 1);
    expect(p).toMatchObject({ last: false, totalPages: 3 });
    expect(p.postings[1]).toEqual({
      externalId: "CC987654320J40000000002",
      title: "资深Web前端工程师",
      company: "海纳演示信息技术（深圳）有限公司",
      city: "深圳",
      salary: "2.5-4万·14薪",
      url: "https://www.zhaopin.com/jobdetail/CC987654320J40000000002.htm",
      publishedAt: "2026-03-01T01:05:44.000Z",
    });
  });
  it("isEndPage = 1 ends the search; ad cards are not postings", () => {
    const p = zhilian.parse(200, fixture("zhilian-last.json"), 3);
    expect(p).toMatchObject({ last: true, totalPages: 3 });
    expect(p.postings.map((x) => x.externalId)).toEqual(["CCL1234567890J40000000001"]);
  });
  it("count 0 is an empty, finished search", () => {
    expect(zhilian.parse(200, fixture("zhilian-empty.json"), 1)).toEqual({ postings: [], totalPages: 1, last: true });
  });
  it("the captcha page and code 210 (not logged in) are bans", () => {
    expect(() => zhilian.parse(200, fixture("zhilian-captcha.html"), 1)).toThrow(SiteBlocked);
    expect(() => zhilian.parse(200, fixture("zhilian-login.json"), 1)).toThrow(SiteBlocked);
  });
  it("malformed JSON is a retryable bad page", () => {
    expect(() => zhilian.parse(200, fixture("zhilian-malformed.json"), 1)).toThrow(BadPage);
  });
});
