import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { printedSchema, schema } from "./index.ts";

describe("schema.graphql", () => {
  it("is the schema the code builds (run `npm run schema:print` after changing it)", () => {
    const committed = readFileSync(new URL("../../../schema.graphql", import.meta.url), "utf8");
    expect(printedSchema()).toBe(committed);
  });

  it("keeps DESIGN.md's fixed names", () => {
    const sdl = printedSchema();
    for (const name of [
      "enum CrawlStatus",
      "type StatusCounts",
      "type CrawlStats",
      "type Claim",
      "claimKeywords(crawlerId: String!, limit: Int = 1, source: ID!): [Claim!]!",
      "reportPageProgress(input: ReportPageProgressInput!): Keyword!",
      "reportCrawlComplete(input: ReportCrawlCompleteInput!): Keyword!",
      "releaseKeyword(keywordId: ID!, leaseToken: String!): Keyword!",
      "heartbeat(keywordId: ID!, leaseToken: String!): Keyword!",
      "importKeywords(cities: [String!]!, jobs: [String!]!, source: ID!): ImportResult!",
      "updateSource(id: ID!, input: UpdateSourceInput!): Source!",
      "crawlStatusDistribution(source: ID!): CrawlStats!",
      "keywordChanged(source: ID): Keyword!",
      "stats(date: Date, source: ID!): CrawlStats!",
      "keyword(id: ID!): Keyword",
      "sources: [Source!]!",
    ]) {
      expect(sdl).toContain(name);
    }
    const keywords = schema.getQueryType()!.getFields().keywords!;
    expect(String(keywords.type)).toBe("KeywordConnection!");
    expect(Object.fromEntries(keywords.args.map((a) => [a.name, String(a.type)]))).toMatchObject({
      source: "ID",
      status: "CrawlStatus",
      search: "String",
      first: "Int",
      after: "String",
    });
  });
});
