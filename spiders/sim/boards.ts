// The three sites' search APIs as the simulator serves them: where each listens, how it reads a
// search out of a request, and how its success and block pages look (shapes from /work/shared/sites).
import { pagePostings, servedCount, type SimPosting, SITE_PAGING, type SiteId, totalCount } from "./data.ts";

export interface Search {
  city: string;
  q: string;
  page: number;
  pageSize: number;
}

export interface Board {
  site: SiteId;
  method: "GET" | "POST";
  /** Path under the site's prefix (`/<site>`). */
  path: string;
  /** The search a request asks for; null when it is not one. */
  search(url: URL, body: string): Search | null;
  ok(seed: string, s: Search): unknown;
  /** The site's answer to a blocked client: [HTTP status, content type, body]. */
  ban: [number, string, string];
}

const int = (v: string | null | undefined, fallback: number) => {
  const n = Number(v);
  return v != null && v !== "" && Number.isInteger(n) && n > 0 ? n : fallback;
};
const ymdhms = (d: Date) => d.toISOString().slice(0, 19).replace("T", " ");

const boss: Board = {
  site: "boss",
  method: "GET",
  path: "/wapi/zpgeek/search/joblist.json",
  search: (u) => ({
    city: u.searchParams.get("city") ?? "",
    q: u.searchParams.get("query") ?? "",
    page: int(u.searchParams.get("page"), 1),
    pageSize: Math.min(int(u.searchParams.get("pageSize"), SITE_PAGING.boss.pageSize), 50),
  }),
  ok(seed, s) {
    const items = pagePostings(seed, "boss", s.city, s.q, s.page, s.pageSize);
    const total = totalCount(seed, "boss", s.city, s.q);
    const hasMore = s.page * s.pageSize < servedCount(seed, "boss", s.city, s.q);
    return {
      code: 0,
      message: "Success",
      zpData: {
        resCount: total,
        filterString: "",
        lid: `sim.${s.page}`,
        hasMore,
        totalCount: Math.min(total, SITE_PAGING.boss.maxResults),
        jobList: items.map((p: SimPosting, i) => ({
          securityId: `sim-sec-${p.externalId}`,
          encryptJobId: p.externalId,
          jobName: p.title,
          lid: `sim.${s.page}.search.${i + 1}`,
          salaryDesc: `${p.salaryMin}-${p.salaryMax}K`,
          jobLabels: ["3-5年", "本科"],
          skills: ["TypeScript"],
          jobExperience: "3-5年",
          jobDegree: "本科",
          cityName: s.city,
          areaDistrict: p.district,
          businessDistrict: "",
          city: Number(s.city) || 0,
          brandName: p.company,
          welfareList: ["五险一金"],
          lastModifyTime: p.publishedAt.getTime(),
        })),
      },
    };
  },
  ban: [200, "application/json", JSON.stringify({ code: 37, message: "您的环境存在异常.", zpData: { name: "sim", seed: "x", ts: 0 } })],
};

const qcwy: Board = {
  site: "qcwy",
  method: "GET",
  path: "/api/job/search-pc",
  search: (u) => ({
    city: u.searchParams.get("jobArea") ?? "",
    q: u.searchParams.get("keyword") ?? "",
    page: int(u.searchParams.get("pageNum"), 1),
    pageSize: Math.min(int(u.searchParams.get("pageSize"), SITE_PAGING.qcwy.pageSize), 50),
  }),
  ok(seed, s) {
    const items = pagePostings(seed, "qcwy", s.city, s.q, s.page, s.pageSize);
    return {
      status: "1",
      resultbody: {
        job: {
          totalCount: totalCount(seed, "qcwy", s.city, s.q),
          items: items.map((p) => ({
            jobId: p.externalId,
            jobName: p.title,
            provideSalaryString: `${p.salaryMin / 10}-${p.salaryMax / 10}万`,
            jobSalaryMin: String(p.salaryMin * 1000),
            jobSalaryMax: String(p.salaryMax * 1000),
            jobAreaString: `${s.city}·${p.district}`,
            jobAreaLevelDetail: { cityString: s.city, districtString: p.district },
            workYearString: "3-4年经验",
            degreeString: "本科",
            jobTags: ["五险一金"],
            companyName: p.company,
            fullCompanyName: `${p.company}有限公司`,
            issueDateString: ymdhms(p.publishedAt),
            jobHref: `https://jobs.51job.com/sim/${p.externalId}.html?s=sou_sou_soulb&req=sim`,
          })),
        },
      },
    };
  },
  ban: [200, "text/html; charset=utf-8", `<html><head><title>slider</title></head><body><div id="nc_1_n1z"></div><script>var arg1='SIM';</script></body></html>`],
};

const zhilian: Board = {
  site: "zhilian",
  method: "POST",
  path: "/c/i/search/positions",
  search(_u, body) {
    let b: Record<string, unknown>;
    try {
      b = JSON.parse(body || "{}");
    } catch {
      return null;
    }
    return {
      city: String(b.S_SOU_WORK_CITY ?? ""),
      q: String(b.S_SOU_FULL_INDEX ?? ""),
      page: int(String(b.pageIndex ?? ""), 1),
      pageSize: Math.min(int(String(b.pageSize ?? ""), SITE_PAGING.zhilian.pageSize), 90),
    };
  },
  ok(seed, s) {
    const items = pagePostings(seed, "zhilian", s.city, s.q, s.page, s.pageSize);
    const count = servedCount(seed, "zhilian", s.city, s.q);
    return {
      code: 200,
      apiCode: 200,
      message: "success",
      data: {
        count,
        isEndPage: s.page * s.pageSize >= count ? 1 : 0,
        list: items.map((p) => ({
          number: p.externalId,
          name: p.title,
          companyName: p.company,
          salary60: `${p.salaryMin / 10}-${p.salaryMax / 10}万`,
          workCity: s.city,
          cityId: s.city,
          cityDistrict: p.district,
          workingExp: "3-5年",
          education: "本科",
          publishTime: ymdhms(p.publishedAt),
          positionUrl: `http://www.zhaopin.com/jobdetail/${p.externalId}.htm`,
          showSkillTags: [{ tag: "TypeScript" }],
        })),
      },
    };
  },
  ban: [
    200,
    "text/html; charset=utf-8",
    `<!DOCTYPE html><html><head><title>Security Verification</title><script src="https://turing.captcha.qcloud.com/TCaptcha.js"></script></head><body></body></html>`,
  ],
};

export const BOARDS: Record<SiteId, Board> = { boss, qcwy, zhilian };
