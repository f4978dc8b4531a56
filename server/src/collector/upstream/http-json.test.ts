import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpJsonUpstream } from "./http-json.ts";
import { UpstreamError } from "./upstream.ts";

// A tiny upstream whose answer each test sets.
let answer: { status: number; body: unknown } = { status: 200, body: {} };
let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(answer.status, { "content-type": "application/json" }).end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api?token=abc`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const page = (total: number, data: object[]) => ({ status: 200, body: { data: { total, data } } });
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error("resolved"); }, (e: UpstreamError) => e);

describe("HttpJsonUpstream", () => {
  it("maps records: key from idField, day from aae397 else Collect_time, offsets from the request", async () => {
    answer = page(12, [
      { uid: 7, aae397: "20261128", Collect_time: "2026-11-29 08:00:00" },
      { uid: "x", aae397: "", Collect_time: "2026-11-27 23:59:59" },
      { aae397: "bad", Collect_time: "" },
    ]);
    const up = new HttpJsonUpstream({ url, idField: "uid" });
    const { total, records } = await up.fetch(9, 3);
    expect(total).toBe(12);
    expect(records.map((r) => [r.offset, r.key, r.day])).toEqual([
      [9, "7", "2026-11-28"],
      [10, "x", "2026-11-27"],
      [11, "@11", null],
    ]);
  });

  it("a short page is a retryable error; a page clipped by the total is not short", async () => {
    answer = page(100, [{ id: 1 }]);
    const e = await failure(new HttpJsonUpstream({ url }).fetch(50, 10));
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ retryable: true, message: expect.stringMatching(/sent 1 records at offset 50, expected 10/) });
    answer = page(51, [{ id: 1 }]);
    expect((await new HttpJsonUpstream({ url }).fetch(50, 10)).records).toHaveLength(1);
  });

  it("5xx and bad JSON are retryable; 4xx and a wrong shape are not; the message names the request", async () => {
    const up = new HttpJsonUpstream({ url });
    answer = { status: 502, body: { error: "bad gateway" } };
    expect(await failure(up.fetch(0, 5))).toMatchObject({ retryable: true, message: expect.stringMatching(/HTTP 502 \(offset=0 limit=5\): .*bad gateway/) });
    answer = { status: 200, body: "<html>" };
    expect(await failure(up.fetch(0, 5))).toMatchObject({ retryable: true, message: expect.stringMatching(/invalid JSON/) });
    answer = { status: 404, body: { error: "no" } };
    expect(await failure(up.fetch(0, 5))).toMatchObject({ retryable: false });
    answer = { status: 200, body: { total: 3, rows: [] } };
    expect(await failure(up.total())).toMatchObject({ retryable: false, message: expect.stringMatching(/not \{data:\{total,data/) });
  });

  it("an unreachable upstream is a retryable error", async () => {
    const e = await failure(new HttpJsonUpstream({ url: "http://127.0.0.1:1/x", timeoutMs: 1000 }).total());
    expect(e).toMatchObject({ retryable: true, message: expect.stringMatching(/upstream request failed/) });
  });
});
