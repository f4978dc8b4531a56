// submitJobPostings and jobPostings through the real server, on both databases: the lease rules
// of a page report, deduplication by (source, externalId), idempotent replays, and postings that
// agree with jobsFound.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  ClaimKeywordsDocument,
  JobPostingsDocument,
  ReleaseKeywordDocument,
  ReportPageProgressDocument,
  SubmitJobPostingsDocument,
  type JobPostingInput,
  type JobPostingsQuery,
} from "../../spiders/src/gql/graphql.ts";
import { snapshot, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const posting = (externalId: string, extra: Partial<JobPostingInput> = {}): JobPostingInput => ({
  externalId,
  title: `岗位 ${externalId}`,
  company: "示例科技",
  city: "北京",
  salary: "15-25K",
  url: `https://example.invalid/${externalId}`,
  ...extra,
});

describe.each(await testProviders())("postings on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  const claimOne = async (source: string) => {
    const d = await s.ok(ClaimKeywordsDocument, { source, crawlerId: "spider-p", limit: 1 }, s.tokens.spider);
    expect(d.claimKeywords).toHaveLength(1);
    return d.claimKeywords[0]!;
  };
  const submit = (keywordId: string, leaseToken: string, page: number, postings: JobPostingInput[], token = s.tokens.spider) =>
    s.request(SubmitJobPostingsDocument, { keywordId, leaseToken, page, postings }, { token });
  const report = (keywordId: string, leaseToken: string, page: number, jobsFound: number, totalPages?: number) =>
    s.ok(ReportPageProgressDocument, { input: { keywordId, leaseToken, page, jobsFound, totalPages } }, s.tokens.spider);
  const sightings = (keywordId: string) =>
    s.app.services.database.reader.postingSighting.count({ where: { keywordId: Number(keywordId) } });

  it("stores a page's postings once per (source, externalId), with first and last seen", async () => {
    await s.importKeywords("boss", ["北京"], ["前端", "后端"]);
    const a = await claimOne("boss");
    const first = await submit(a.keyword.id, a.leaseToken, 1, [posting("j1"), posting("j2"), posting("j2"), posting("j3")]);
    expect(first.errors).toBeUndefined();
    expect(first.data?.submitJobPostings).toEqual({ page: 1, accepted: 3, created: 3 });
    await report(a.keyword.id, a.leaseToken, 1, 3);

    // Another keyword lists j2 and j3 again, and a new j4: two known, one created.
    const b = await claimOne("boss");
    s.clock.advance(60_000);
    const second = await submit(b.keyword.id, b.leaseToken, 1, [posting("j2", { title: "改名的岗位" }), posting("j3"), posting("j4")]);
    expect(second.data?.submitJobPostings).toEqual({ page: 1, accepted: 3, created: 1 });

    const rows = await s.app.services.database.reader.jobPosting.findMany({ where: { sourceId: "boss" }, orderBy: { id: "asc" } });
    expect(rows.map((r) => r.externalId)).toEqual(["j1", "j2", "j3", "j4"]);
    const j2 = rows[1]!;
    expect(j2.title).toBe("改名的岗位");
    expect(j2.lastSeenAt.getTime() - j2.firstSeenAt.getTime()).toBe(60_000);
    expect(rows[0]!.lastSeenAt.getTime()).toBe(rows[0]!.firstSeenAt.getTime());

    // The same externalId on another source is another posting.
    await s.importKeywords("zhilian", ["北京"], ["前端"]);
    const z = await claimOne("zhilian");
    expect((await submit(z.keyword.id, z.leaseToken, 1, [posting("j1")])).data?.submitJobPostings.created).toBe(1);

    // keywordsSeen: distinct keywords per posting, every posting of the page in one query.
    const groupBy = vi.spyOn(s.app.services.database.reader.postingSighting, "groupBy");
    try {
      const page = await s.ok(JobPostingsDocument, { source: "boss", first: 10 });
      expect(page.jobPostings.edges.map((e) => [e.node.externalId, e.node.keywordsSeen])).toEqual([["j1", 1], ["j2", 2], ["j3", 2], ["j4", 1]]);
      expect(groupBy).toHaveBeenCalledTimes(1);
    } finally {
      groupBy.mockRestore();
    }
  });

  it("known postings seen again take no new ids (PostgreSQL's sequence is not used up by refreshes)", async () => {
    const db = s.app.services.database;
    const { Prisma } = await import("../../generated/sqlite/client.ts");
    // The highest id handed out so far: the sequence's last value, or SQLite's AUTOINCREMENT record.
    const handedOut = async () => {
      const [row] = await db.query<{ n: number | string }>(
        provider === "postgres"
          ? Prisma.sql`SELECT last_value AS n FROM "JobPosting_id_seq"`
          : Prisma.sql`SELECT seq AS n FROM sqlite_sequence WHERE name = 'JobPosting'`,
      );
      return Number(row!.n);
    };
    await s.importKeywords("boss", ["杭州"], ["测试", "运维", "产品"]);
    const seen = ["s1", "s2", "s3", "s4", "s5"].map((id) => posting(id));
    const a = await claimOne("boss");
    expect((await submit(a.keyword.id, a.leaseToken, 1, seen)).data?.submitJobPostings.created).toBe(5);
    const before = await handedOut();
    // Three pages of two more keywords list the same five again, plus one new posting in all.
    const b = await claimOne("boss");
    const c = await claimOne("boss");
    for (const page of [1, 2, 3]) {
      expect((await submit(b.keyword.id, b.leaseToken, page, seen)).data?.submitJobPostings.created).toBe(0);
      const extra = page === 2 ? [posting("s6")] : [];
      const r = await submit(c.keyword.id, c.leaseToken, page, [...seen, ...extra]);
      expect(r.data?.submitJobPostings.created).toBe(extra.length);
    }
    // 30 refreshes and one new posting: one id handed out (an upsert of every row took 31).
    expect((await handedOut()) - before).toBe(1);
    const max = await db.reader.jobPosting.aggregate({ _max: { id: true } });
    expect(Number(max._max.id)).toBe(await handedOut());
    for (const k of [a, b, c]) await s.ok(ReleaseKeywordDocument, { keywordId: k.keyword.id, leaseToken: k.leaseToken }, s.tokens.spider);
  });

  it("a replayed page replaces its postings; jobsFound = the keyword's sightings", async () => {
    await s.importKeywords("qcwy", ["上海"], ["测试"]);
    const c = await claimOne("qcwy");
    const id = c.keyword.id;
    await submit(id, c.leaseToken, 1, [posting("q1"), posting("q2")]);
    await report(id, c.leaseToken, 1, 2, 3);
    // Page 2 is sent twice (a retry); the second copy differs (the site reshuffled).
    await submit(id, c.leaseToken, 2, [posting("q3"), posting("q4")]);
    const again = await submit(id, c.leaseToken, 2, [posting("q3"), posting("q5"), posting("q6")]);
    expect(again.data?.submitJobPostings).toEqual({ page: 2, accepted: 3, created: 2 });
    const kw = (await report(id, c.leaseToken, 2, 3, 3)).reportPageProgress;
    expect(kw.jobsFound).toBe(5);
    expect(await sightings(id)).toBe(5);
  });

  it("a reset keyword crawled again counts only its new pages' postings", async () => {
    await s.importKeywords("qcwy", ["广州"], ["重来"]);
    const a = await claimOne("qcwy");
    for (const page of [1, 2, 3]) {
      await submit(a.keyword.id, a.leaseToken, page, [posting(`r${page}a`), posting(`r${page}b`)]);
      await report(a.keyword.id, a.leaseToken, page, 2, 10);
    }
    // The spider dies after submitting page 4, before reporting it.
    await submit(a.keyword.id, a.leaseToken, 4, [posting("r4a")]);
    expect(await sightings(a.keyword.id)).toBe(7);
    await s.ok(`mutation($id: ID!) { resetKeyword(id: $id) { id } }`, { id: a.keyword.id });
    const b = await claimOne("qcwy");
    expect(b.keyword.id).toBe(a.keyword.id);
    await submit(b.keyword.id, b.leaseToken, 1, [posting("n1")]);
    const kw = (await report(b.keyword.id, b.leaseToken, 1, 1, 10)).reportPageProgress;
    expect(kw.jobsFound).toBe(1);
    expect(await sightings(b.keyword.id)).toBe(1);
  });

  it("refuses a stale lease like a page report does, and changes nothing", async () => {
    await s.importKeywords("qcwy", ["杭州"], ["租约"]);
    const c = await claimOne("qcwy");
    await s.ok(ReleaseKeywordDocument, { keywordId: c.keyword.id, leaseToken: c.leaseToken }, s.tokens.spider);
    const before = await snapshot(s);
    const postingsBefore = await s.app.services.database.reader.jobPosting.count();
    const lost = await submit(c.keyword.id, c.leaseToken, 1, [posting("x1")]);
    expect(lost.errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
    const other = await submit(c.keyword.id, "not-the-lease", 1, [posting("x1")]);
    expect(other.errors?.[0]?.extensions?.code).toBe("INVALID_TRANSITION");
    expect((await submit("999999", "x", 1, [posting("x1")])).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(await snapshot(s)).toEqual(before);
    expect(await s.app.services.database.reader.jobPosting.count()).toBe(postingsBefore);

    // The new lease holder is accepted; the old one, while another crawler holds it, is LEASE_LOST.
    const again = await claimOne("qcwy");
    expect((await submit(again.keyword.id, c.leaseToken, 1, [posting("x1")])).errors?.[0]?.extensions?.code).toBe("LEASE_LOST");
    expect((await submit(again.keyword.id, again.leaseToken, 1, [posting("x1")])).errors).toBeUndefined();
  });

  it("the page that completed the keyword may be sent again with the same lease (a lost answer)", async () => {
    await s.importKeywords("boss", ["广州"], ["完成"]);
    const c = await claimOne("boss");
    await submit(c.keyword.id, c.leaseToken, 1, [posting("g1")]);
    expect((await report(c.keyword.id, c.leaseToken, 1, 1, 1)).reportPageProgress.status).toBe("COMPLETED");
    const replay = await submit(c.keyword.id, c.leaseToken, 1, [posting("g1")]);
    expect(replay.data?.submitJobPostings).toEqual({ page: 1, accepted: 1, created: 0 });
    // A page it never reported is not a replay.
    expect((await submit(c.keyword.id, c.leaseToken, 2, [posting("g2")])).errors?.[0]?.extensions?.code).toBe("INVALID_TRANSITION");
  });

  it("bad input is BAD_USER_INPUT and writes nothing; viewers may not submit", async () => {
    await s.importKeywords("zhilian", ["深圳"], ["输入"]);
    const c = await claimOne("zhilian");
    const count = () => s.app.services.database.reader.jobPosting.count();
    const before = await count();
    const bad = async (page: number, postings: JobPostingInput[]) => (await submit(c.keyword.id, c.leaseToken, page, postings)).errors?.[0]?.extensions?.code;
    expect(await bad(0, [posting("b1")])).toBe("BAD_USER_INPUT");
    expect(await bad(16, [posting("b1")])).toBe("BAD_USER_INPUT"); // zhilian maxPages 15
    expect(await bad(1, [posting("")])).toBe("BAD_USER_INPUT");
    expect(await bad(1, [posting("b1", { title: "x".repeat(300) })])).toBe("BAD_USER_INPUT");
    expect(await bad(1, [posting("b1", { url: "javascript:alert(1)" })])).toBe("BAD_USER_INPUT");
    expect(await bad(1, Array.from({ length: 501 }, (_, i) => posting(`b${i}`)))).toBe("BAD_USER_INPUT");
    expect((await submit(c.keyword.id, c.leaseToken, 1, [posting("b1")], s.tokens.viewer)).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(await count()).toBe(before);
    // Admins may submit.
    expect((await submit(c.keyword.id, c.leaseToken, 1, [posting("b1")], s.tokens.admin)).errors).toBeUndefined();
  });

  it("jobPostings filters by source, city and text, and pages with a cursor", async () => {
    await s.importKeywords("qcwy", ["成都"], ["分页"]);
    const c = await claimOne("qcwy");
    const many = Array.from({ length: 25 }, (_, i) => posting(`cd${i}`, { city: "成都", title: i % 5 === 0 ? "Rust 工程师" : "前端", company: `公司${i}` }));
    await submit(c.keyword.id, c.leaseToken, 1, many);
    const all: string[] = [];
    let after: string | null | undefined = null;
    for (;;) {
      const d: JobPostingsQuery = await s.ok(JobPostingsDocument, { source: "qcwy", city: "成都", first: 10, after }, s.tokens.viewer);
      expect(d.jobPostings.totalCount).toBe(25);
      all.push(...d.jobPostings.edges.map((e) => e.node.externalId));
      if (!d.jobPostings.pageInfo.hasNextPage) break;
      after = d.jobPostings.pageInfo.endCursor;
    }
    expect(all).toEqual(many.map((p) => p.externalId));
    const rust = await s.ok(JobPostingsDocument, { source: "qcwy", search: "Rust", first: 50 });
    expect(rust.jobPostings.edges.map((e) => e.node.externalId)).toEqual(["cd0", "cd5", "cd10", "cd15", "cd20"]);
    const byCompany = await s.ok(JobPostingsDocument, { search: "公司7" });
    expect(byCompany.jobPostings.edges.map((e) => e.node)).toEqual([expect.objectContaining({ externalId: "cd7", keywordsSeen: 1, sourceId: "qcwy" })]);
    expect((await s.request(JobPostingsDocument, { search: "x".repeat(101) })).errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});
