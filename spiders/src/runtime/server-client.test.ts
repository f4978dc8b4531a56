// The spider's GraphQL client: which answers are retried (server down, 5xx, masked faults) and
// which are final (any error with a code), against a scripted HTTP server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HeartbeatDocument } from "../gql/graphql.ts";
import { ApiError, ServerClient, ServerUnavailable } from "./server-client.ts";

type Answer = [number, unknown];
let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A server answering each request with the next scripted answer; returns its URL and a request count. */
async function scripted(answers: Answer[]) {
  const seen = { requests: 0 };
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const [status, body] = answers[Math.min(seen.requests++, answers.length - 1)]!;
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, seen };
}

const client = (url: string, retryForMs = 5_000) => new ServerClient({ url, token: "t", timeoutMs: 1_000, retryForMs, minMs: 5, maxMs: 20 });
const vars = { keywordId: "1", leaseToken: "l" };
const ok: Answer = [200, { data: { heartbeat: { id: "1" } } }];

describe("ServerClient", () => {
  it("retries 5xx, non-JSON answers, masked internal errors and DATABASE_UNAVAILABLE until an answer comes", async () => {
    const { url, seen } = await scripted([
      [503, { error: "down" }],
      [502, "<html>"],
      [200, { errors: [{ message: "Unexpected error.", extensions: { code: "INTERNAL_SERVER_ERROR" } }] }],
      [200, { errors: [{ message: "Unexpected error." }] }],
      [503, { errors: [{ message: "the database is unavailable right now", extensions: { code: "DATABASE_UNAVAILABLE" } }] }],
      [200, { errors: [{ message: "the database is unavailable right now", extensions: { code: "DATABASE_UNAVAILABLE" } }] }],
      ok,
    ]);
    expect(await client(url).request(HeartbeatDocument, vars)).toEqual({ heartbeat: { id: "1" } });
    expect(seen.requests).toBe(7);
  });

  it("an error with a code is the server's answer: thrown at once as ApiError", async () => {
    for (const code of ["LEASE_LOST", "BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"]) {
      const { url, seen } = await scripted([[200, { errors: [{ message: "no", extensions: { code } }] }], ok]);
      const e = await client(url).request(HeartbeatDocument, vars).catch((x) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect(e.code).toBe(code);
      expect(seen.requests).toBe(1);
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
    }
  });

  it("a server that stays away fails with ServerUnavailable once retryForMs has passed", async () => {
    const e = await client("http://127.0.0.1:9/graphql", 300).request(HeartbeatDocument, vars).catch((x) => x);
    expect(e).toBeInstanceOf(ServerUnavailable);
  });
});
