// Bad input gets a typed error and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { snapshot, startServer, type TestServer } from "./harness.ts";
import { testProviders } from "./databases.ts";

const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;
const COMPLETE = `mutation($i: ReportCrawlCompleteInput!) { reportCrawlComplete(input: $i) { id } }`;
const CLAIM = `mutation($s: ID!, $c: String!, $l: Int) { claimKeywords(source: $s, crawlerId: $c, limit: $l) { leaseToken } }`;
const IMPORT = `mutation($s: ID!, $c: [String!]!, $j: [String!]!) { importKeywords(source: $s, cities: $c, jobs: $j) { created } }`;
const UPDATE = `mutation($id: ID!, $i: UpdateSourceInput!) { updateSource(id: $id, input: $i) { id } }`;

describe.each(await testProviders())("bad input on %s", (provider) => {
  let s: TestServer;
  let keywordId: string;
  let lease: string;
  let idleId: string;
  beforeAll(async () => {
    s = await startServer(provider);
    await s.importKeywords("boss", ["北京", "上海"], ["Java"]);
    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "ok", limit: 1 }, s.tokens.spider)).claimKeywords;
    keywordId = c!.keyword.id;
    lease = c!.leaseToken;
    await s.ok(ReportPageProgressDocument, { input: { keywordId, leaseToken: lease, page: 1, jobsFound: 10 } }, s.tokens.spider);
    const all = await s.ok(`{ keywords(status: IDLE) { edges { node { id } } } }`);
    idleId = all.keywords.edges[0].node.id;
  });
  afterAll(() => s?.close());

  const report = (over: Record<string, unknown>) => ({ i: { keywordId, leaseToken: lease, page: 2, jobsFound: 5, ...over } });

  const cases: [string, string, () => Record<string, unknown>, string, string?][] = [
    ["page 0", REPORT, () => report({ page: 0 }), "BAD_USER_INPUT"],
    // Text columns cannot hold NUL (PostgreSQL refuses it): bad input, never a server error.
    ["NUL in an error message", COMPLETE, () => ({ i: { keywordId, leaseToken: lease, status: "FAILED", errorMessage: "bad\u0000page" } }), "BAD_USER_INPUT"],
    ["NUL in a lease token", REPORT, () => report({ leaseToken: `${lease}\u0000` }), "BAD_USER_INPUT"],
    ["NUL in a city", IMPORT, () => ({ s: "boss", c: ["北\u0000京"], j: ["Java"] }), "BAD_USER_INPUT"],
    ["page -3", REPORT, () => report({ page: -3 }), "BAD_USER_INPUT"],
    ["page beyond the source's maxPages", REPORT, () => report({ page: 4 }), "BAD_USER_INPUT"],
    ["page beyond the reported totalPages", REPORT, () => report({ page: 3, totalPages: 2 }), "BAD_USER_INPUT"],
    ["negative jobsFound", REPORT, () => report({ jobsFound: -1 }), "BAD_USER_INPUT"],
    ["absurd jobsFound", REPORT, () => report({ jobsFound: 5_000_000 }), "BAD_USER_INPUT"],
    ["negative totalPages", REPORT, () => report({ totalPages: -2 }), "BAD_USER_INPUT"],
    ["absurd totalPages", REPORT, () => report({ totalPages: 2_000_000 }), "BAD_USER_INPUT"],
    ["malformed keyword id", REPORT, () => report({ keywordId: "abc" }), "BAD_USER_INPUT"],
    ["unknown keyword", REPORT, () => report({ keywordId: "987654" }), "NOT_FOUND"],
    ["over-long lease token", REPORT, () => report({ leaseToken: "x".repeat(65) }), "BAD_USER_INPUT"],
    ["someone else's lease", REPORT, () => report({ leaseToken: "not-the-lease" }), "LEASE_LOST"],
    ["a report on a keyword that is not CRAWLING", REPORT, () => report({ keywordId: idleId, page: 1 }), "INVALID_TRANSITION"],
    ["completion status PARTIAL", COMPLETE, () => ({ i: { keywordId, leaseToken: lease, status: "PARTIAL" } }), "BAD_USER_INPUT"],
    ["completion status IDLE", COMPLETE, () => ({ i: { keywordId, leaseToken: lease, status: "IDLE" } }), "BAD_USER_INPUT"],
    ["completion status CRAWLING", COMPLETE, () => ({ i: { keywordId, leaseToken: lease, status: "CRAWLING" } }), "BAD_USER_INPUT"],
    ["over-long error message", COMPLETE, () => ({ i: { keywordId, leaseToken: lease, status: "FAILED", errorMessage: "e".repeat(2001) } }), "BAD_USER_INPUT"],
    ["completing a keyword that is not CRAWLING", COMPLETE, () => ({ i: { keywordId: idleId, leaseToken: "x", status: "COMPLETED" } }), "INVALID_TRANSITION"],
    ["claim from an unknown source", CLAIM, () => ({ s: "indeed", c: "x" }), "NOT_FOUND"],
    ["claim limit 0", CLAIM, () => ({ s: "boss", c: "x", l: 0 }), "BAD_USER_INPUT"],
    ["claim limit 10000", CLAIM, () => ({ s: "boss", c: "x", l: 10000 }), "BAD_USER_INPUT"],
    ["empty crawlerId", CLAIM, () => ({ s: "boss", c: "" }), "BAD_USER_INPUT"],
    ["over-long crawlerId", CLAIM, () => ({ s: "boss", c: "c".repeat(65) }), "BAD_USER_INPUT"],
    ["import into an unknown source", IMPORT, () => ({ s: "indeed", c: ["a"], j: ["b"] }), "NOT_FOUND"],
    ["import an over-long city", IMPORT, () => ({ s: "boss", c: ["城".repeat(65)], j: ["b"] }), "BAD_USER_INPUT"],
    ["import an over-long job", IMPORT, () => ({ s: "boss", c: ["a"], j: ["j".repeat(129)] }), "BAD_USER_INPUT"],
    ["import a blank city", IMPORT, () => ({ s: "boss", c: ["  "], j: ["b"] }), "BAD_USER_INPUT"],
    ["import with no jobs", IMPORT, () => ({ s: "boss", c: ["a"], j: [] }), "BAD_USER_INPUT"],
    ["import 1001 cities", IMPORT, () => ({ s: "boss", c: Array.from({ length: 1001 }, (_, i) => `c${i}`), j: ["b"] }), "BAD_USER_INPUT"],
    ["maxPages 0", UPDATE, () => ({ id: "boss", i: { maxPages: 0 } }), "BAD_USER_INPUT"],
    ["negative staleAfterSeconds", UPDATE, () => ({ id: "boss", i: { staleAfterSeconds: -1 } }), "BAD_USER_INPUT"],
    ["negative maxRetries", UPDATE, () => ({ id: "boss", i: { maxRetries: -1 } }), "BAD_USER_INPUT"],
    ["update an unknown source", UPDATE, () => ({ id: "indeed", i: { maxPages: 5 } }), "NOT_FOUND"],
    ["stats of an unknown source", `query($s: ID!) { stats(source: $s) { total } }`, () => ({ s: "indeed" }), "NOT_FOUND"],
    ["stats of an impossible date", `query { stats(source: "boss", date: "2026-02-30") { total } }`, () => ({}), "BAD_USER_INPUT"],
    ["stats date in the wrong format", `query($d: Date) { stats(source: "boss", date: $d) { total } }`, () => ({ d: "29/11/2026" }), "BAD_USER_INPUT"],
    ["an id beyond the 32-bit range", `query { keyword(id: "99999999999") { id } }`, () => ({}), "BAD_USER_INPUT"],
    ["keyword with a malformed id", `query { keyword(id: "1; DROP TABLE") { id } }`, () => ({}), "BAD_USER_INPUT"],
    // found by npm run chaos's fuzzer: an id with spaces around it was read as the id
    ["an id with a trailing space", `query { keyword(id: "1 ") { id } }`, () => ({}), "BAD_USER_INPUT"],
    ["an id with a leading tab", `query { keyword(id: "\\t1") { id } }`, () => ({}), "BAD_USER_INPUT"],
    ["a mutation's id with a space", `mutation { resetKeyword(id: " 1") { id } }`, () => ({}), "BAD_USER_INPUT"],
    ["over-long search", `query($q: String) { keywords(search: $q) { totalCount } }`, () => ({ q: "q".repeat(101) }), "BAD_USER_INPUT"],
    ["a page size over the maximum", `query { keywords(first: 100000) { totalCount } }`, () => ({}), "BAD_USER_INPUT"],
    ["a variable of the wrong type", REPORT, () => report({ page: "two" }), "BAD_USER_INPUT"],
  ];

  it.each(cases)("%s → typed error, nothing changed", async (_name, query, vars, code) => {
    const before = await snapshot(s);
    const r = await s.request(query, vars());
    expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors)).toBe(code);
    expect(r.errors?.[0]?.message).toBeTruthy();
    expect(await snapshot(s)).toEqual(before);
  });

  it("an unknown keyword in a query is null, not an error", async () => {
    const r = await s.request(`{ keyword(id: "987654") { id } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({ keyword: null });
  });
});
