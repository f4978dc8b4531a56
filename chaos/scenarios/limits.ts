// Deep, expensive and aliased queries: refused by the depth / cost / alias / token limits with a
// code, before anything runs, over HTTP and over graphql-ws alike.
import { snapshot, startServer } from "../../server/test/harness.ts";
import { Checks, codesOf, gql, post, type Scenario, wsSession } from "../lib.ts";

/** `levels` nested keyword connections. */
function nested(levels: number) {
  let q = "id";
  for (let i = 0; i < levels; i++) q = `k${i}: keywords { edges { node { ${q} } } }`;
  return `{ ${q} }`;
}

export function abusiveQueries(): [string, string, string[]][] {
  const fragments = Array.from({ length: 14 }, (_, i) => `fragment F${i} on KeywordConnection { edges { node { source { keywords { ...F${i + 1} } } } } }`).join("\n");
  // types × fields × types × …: exponential in the nesting (graphql-armor skips introspection; graphql-js's own rule refuses it).
  const introspection = `{ __schema { types { fields { type { fields { type { fields { type { fields { type { name } } } } } } } } } } }`;
  return [
    ["15 nested connections", nested(15), ["BAD_USER_INPUT"]],
    ["depth through 14 chained fragments", `{ keywords { ...F0 } }\n${fragments.replace("...F14", "id")}`, ["BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"]],
    ["cyclic fragments", `{ keywords { ...A } } fragment A on KeywordConnection { edges { node { source { keywords { ...B } } } } } fragment B on KeywordConnection { ...A }`, ["GRAPHQL_VALIDATION_FAILED", "BAD_USER_INPUT"]],
    ["cyclic introspection (types → fields → type, 4 deep)", introspection, ["GRAPHQL_VALIDATION_FAILED", "BAD_USER_INPUT"]],
    ["500 keywords × 500 events × reports", `{ keywords(first: 500) { edges { node { events(last: 500) { id } pageReports { page } } } } }`, ["BAD_USER_INPUT"]],
    ["5 aliased 500-keyword pages", `{ ${Array.from({ length: 5 }, (_, i) => `a${i}: keywords(first: 500) { edges { node { events(last: 50) { id } } } }`).join(" ")} }`, ["BAD_USER_INPUT"]],
    ["50 aliases", `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: sources { id }`).join(" ")} }`, ["BAD_USER_INPUT"]],
    ["1000 aliased stats", `{ ${Array.from({ length: 1000 }, (_, i) => `s${i}: stats(source: "boss") { total }`).join(" ")} }`, ["BAD_USER_INPUT"]],
    ["5000 tokens", `{ sources { ${Array.from({ length: 2500 }, () => "id").join(" ")} } }`, ["BAD_USER_INPUT"]],
    ["a field repeated 3000 times", `{ sources { ${"id ".repeat(3000)} } }`, ["BAD_USER_INPUT"]],
    ["200 repeated directives", `{ sources ${"@include(if: true) ".repeat(200)} { id } }`, ["BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"]],
    ["deep subscription", `subscription { keywordChanged { source { keywords { edges { node { source { keywords { edges { node { source { keywords { edges { node { id } } } } } } } } } } } } } }`, ["BAD_USER_INPUT"]],
  ];
}

export const limits: Scenario = {
  name: "query-limits",
  async run(ctx) {
    const c = new Checks();
    const s = await startServer(ctx.db);
    try {
      await s.importKeywords("boss", Array.from({ length: 30 }, (_, i) => `c${i}`), ["Java", "Go"]);
      const before = await snapshot(s);
      const url = s.app.url();
      const cases = abusiveQueries();
      const bar = ctx.progress(cases.length * 2 + 1);
      let refused = 0;
      for (const [what, query, codes] of cases) {
        const a = await gql(url, query, undefined, s.tokens.viewer);
        const code = codesOf(a)[0];
        if (c.ok(a.status < 500 && code && codes.includes(code) && a.json?.data == null, `HTTP ${what} → ${a.status} ${a.text.slice(0, 200)}`)) refused++;
        bar.tick();
        const ws = await wsSession(url, { Authorization: `Bearer ${s.tokens.viewer}` });
        const m = await ws.first(query);
        const errs = m.type === "error" ? m.payload : m.payload?.errors;
        if (c.ok(errs?.[0]?.extensions?.code && codes.includes(errs[0].extensions.code) && !m.payload?.data, `graphql-ws ${what} → ${JSON.stringify(m).slice(0, 200)}`)) refused++;
        ws.close();
        bar.tick();
      }
      // A batch of 1000 operations in one body is not executed either.
      const batch = await post(url, JSON.stringify(Array.from({ length: 1000 }, () => ({ query: "{ sources { id } }" }))));
      c.ok(batch.status >= 400 && batch.status < 500 && codesOf(batch)[0], `a 1000-operation batch → ${batch.status} ${batch.text.slice(0, 200)}`);
      bar.tick();
      bar.done();
      // Under the limits, a legitimately deep query still answers.
      const fine = await gql(url, `{ keywords(first: 50) { edges { node { source { id } events { id } pageReports { page } } } } }`);
      c.ok(fine.status === 200 && !fine.json?.errors, `a query within the limits → ${fine.text.slice(0, 200)}`);
      const unchanged = JSON.stringify(await snapshot(s)) === JSON.stringify(before);
      c.ok(unchanged, "state changed");
      return {
        tried: `${cases.length} deep/costly/aliased/oversized documents over HTTP and graphql-ws, and a 1000-operation batch`,
        survived: `${refused}/${cases.length * 2} refused with a code, batch ${batch.status}; a query within the limits answered`,
        checks: c.count,
        failures: c.failures,
        details: { documents: cases.length, refused },
      };
    } finally {
      await s.close();
    }
  },
};
