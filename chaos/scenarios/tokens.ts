// Bad tokens: missing, malformed, unknown, revoked, the wrong role — over HTTP and over graphql-ws.
// Every one is refused with UNAUTHENTICATED (401) or FORBIDDEN (403), the socket with 4403, and
// nothing changes.
import { createToken, revokeToken, Role } from "../../server/src/auth/tokens.ts";
import { snapshot, startServer } from "../../server/test/harness.ts";
import { Checks, codesOf, gql, type Scenario, wsSession } from "../lib.ts";

const CLAIM = `mutation { claimKeywords(source: "boss", crawlerId: "intruder", limit: 5) { leaseToken } }`;
const IMPORT = `mutation { importKeywords(source: "boss", cities: ["x"], jobs: ["y"]) { created } }`;
const RESET = `mutation { resetKeyword(id: "1") { id } }`;
const UPDATE = `mutation { updateSource(id: "boss", input: { maxPages: 1 }) { id } }`;
const SUB = `subscription { crawlStatusDistribution(source: "boss") { total } }`;

export const tokens: Scenario = {
  name: "bad-tokens",
  async run(ctx) {
    const c = new Checks();
    const s = await startServer(ctx.db);
    const closed = await startServer("sqlite", { config: { PUBLIC_READS: false } });
    try {
      await s.importKeywords("boss", ["北京", "上海"], ["Java"]);
      const db = s.app.services.database;
      const revoked = await createToken(db, Role.ADMIN, "revoked");
      await revokeToken(db, String(revoked.row.id));
      const before = await snapshot(s);
      const url = s.app.url();
      const raw = (authorization: string | undefined, query: string) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...(authorization !== undefined ? { authorization } : {}) },
          body: JSON.stringify({ query }),
        }).then(async (r) => ({ status: r.status, json: (await r.json().catch(() => undefined)) as any, text: "" }));

      const unauthenticated: [string, string | undefined][] = [
        ["no header", undefined],
        ["empty header", ""],
        ["Bearer without a token", "Bearer "],
        ["a made-up token", "Bearer not-a-token"],
        ["a token-shaped forgery", `Bearer ccp_${"A".repeat(43)}`],
        ["Basic auth", "Basic dXNlcjpwYXNz"],
        ["a 10 kB token", `Bearer ccp_${"x".repeat(10_000)}`],
        ["two tokens", `Bearer ${s.tokens.admin} ${s.tokens.admin}`],
        ["a revoked admin token", `Bearer ${revoked.token}`],
      ];
      let tried = 0;
      for (const [what, header] of unauthenticated) {
        for (const q of [CLAIM, IMPORT, RESET]) {
          tried++;
          const a = await raw(header, q);
          c.ok(a.status === 401 && codesOf(a)[0] === "UNAUTHENTICATED", `${what}: ${q.slice(11, 30)} → HTTP ${a.status} ${JSON.stringify(a.json?.errors?.[0])}`);
          c.ok(a.json?.data == null, `${what}: no data`);
        }
      }
      const forbidden: [string, string, string][] = [
        ["viewer claims", s.tokens.viewer, CLAIM],
        ["viewer imports", s.tokens.viewer, IMPORT],
        ["spider imports", s.tokens.spider, IMPORT],
        ["spider resets", s.tokens.spider, RESET],
        ["spider updates a source", s.tokens.spider, UPDATE],
      ];
      for (const [what, token, q] of forbidden) {
        tried++;
        const a = await gql(url, q, undefined, token);
        c.ok(a.status === 403 && codesOf(a)[0] === "FORBIDDEN", `${what} → HTTP ${a.status} ${JSON.stringify(a.json?.errors?.[0])}`);
      }
      // A revoked token is refused for reads too.
      tried++;
      const read = await gql(url, `{ sources { id } }`, undefined, revoked.token);
      c.ok(codesOf(read)[0] === "UNAUTHENTICATED", `read with a revoked token → ${read.text.slice(0, 200)}`);

      // graphql-ws: unknown, revoked and malformed tokens close the socket with 4403.
      const socketCases: [string, unknown][] = [
        ["unknown token", { Authorization: "Bearer not-a-token" }],
        ["revoked token", { Authorization: `Bearer ${revoked.token}` }],
        ["token of the wrong type", { Authorization: 12345 }],
        ["token as an object", { Authorization: { Bearer: s.tokens.admin } }],
      ];
      for (const [what, params] of socketCases) {
        tried++;
        const ws = await wsSession(url, params);
        c.ok(!ws.acked && ws.closeCode === 4403, `socket with ${what}: acked=${ws.acked} close=${ws.closeCode}`);
        ws.close();
      }
      // The wrong role over a socket: FORBIDDEN, and the socket stays usable.
      tried++;
      const viewer = await wsSession(url, { Authorization: `Bearer ${s.tokens.viewer}` });
      const m = await viewer.first(CLAIM);
      const errs = m.type === "error" ? m.payload : m.payload?.errors;
      c.ok(errs?.[0]?.extensions?.code === "FORBIDDEN", `viewer claims over a socket → ${JSON.stringify(m)}`);
      const still = await viewer.first(SUB);
      c.ok(still.type === "next", `viewer's socket still serves reads after a refusal → ${JSON.stringify(still)}`);
      viewer.close();
      // Revoked while the socket is open: the next operation is UNAUTHENTICATED.
      tried++;
      const doomed = await createToken(db, Role.VIEWER, "doomed");
      const open = await wsSession(url, { Authorization: `Bearer ${doomed.token}` });
      c.ok((await open.first(SUB)).type === "next", "a live token subscribes");
      await revokeToken(db, String(doomed.row.id));
      const after = await open.first(SUB);
      const afterErrs = after.type === "error" ? after.payload : after.payload?.errors;
      c.ok(afterErrs?.[0]?.extensions?.code === "UNAUTHENTICATED", `revoked on an open socket → ${JSON.stringify(after)}`);
      open.close();
      // PUBLIC_READS=false: no token, no socket; no token, no read.
      tried += 2;
      const anon = await wsSession(closed.app.url(), {});
      c.ok(!anon.acked && anon.closeCode === 4403, `PUBLIC_READS=false socket without a token: acked=${anon.acked} close=${anon.closeCode}`);
      anon.close();
      const anonRead = await gql(closed.app.url(), `{ sources { id } }`);
      c.ok(anonRead.status === 401 && codesOf(anonRead)[0] === "UNAUTHENTICATED", `PUBLIC_READS=false read without a token → ${anonRead.status}`);

      const unchanged = JSON.stringify(await snapshot(s)) === JSON.stringify(before);
      c.ok(unchanged, "state changed by refused requests");
      return {
        tried: `${tried} requests/sockets with missing, malformed, forged, revoked or wrong-role tokens (HTTP + graphql-ws)`,
        survived: `${tried - c.failed >= 0 ? c.count - c.failed : 0}/${c.count} checks; state ${unchanged ? "unchanged" : "CHANGED"}`,
        checks: c.count,
        failures: c.failures,
        details: { requests: tried, stateUnchanged: unchanged },
      };
    } finally {
      await closed.close();
      await s.close();
    }
  },
};
