import { parse, validate } from "graphql";
import { describe, expect, it } from "vitest";
import { GRAPHIQL_EXAMPLE } from "./graphiql-example.ts";
import { schema } from "./schema/index.ts";

describe("GraphiQL's opening document", () => {
  it("is valid against the schema, operation by operation (it never rots)", () => {
    const doc = parse(GRAPHIQL_EXAMPLE);
    expect(validate(schema, doc)).toEqual([]);
    const names = doc.definitions.map((d) => ("name" in d ? d.name?.value : undefined));
    expect(names).toEqual(["Sources", "ImportKeywords", "Claim", "ReportPage", "Complete", "Release", "Stats", "History", "Distribution"]);
  });
});
