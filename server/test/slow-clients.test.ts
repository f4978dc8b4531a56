// A client that sends its request a byte at a time is cut off after REQUEST_TIMEOUT_MS with a 408
// and a closed connection, while other clients are served (Node's default would hold it 5 min).
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { startServer, type TestServer } from "./harness.ts";

describe("slow clients", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("sqlite", { config: { REQUEST_TIMEOUT_MS: 1000, MAX_BODY_BYTES: 4096 } });
  });
  afterAll(() => s?.close());

  it("a body that never finishes arriving gets 408 and a closed socket; others are served meanwhile", async () => {
    const socket = connect(Number(new URL(s.app.url()).port), "127.0.0.1");
    socket.on("error", () => {});
    let received = "";
    socket.on("data", (d) => (received += d.toString()));
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    const body = JSON.stringify({ query: "{ sources { id } }" });
    socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 3)}`);
    // Keep dribbling, far slower than the limit allows.
    const timer = setInterval(() => socket.writable && socket.write(" "), 300);
    expect((await s.ok(`{ sources { id } }`)).sources).toHaveLength(3);
    await closed;
    clearInterval(timer);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect((await s.ok(`{ sources { id } }`)).sources).toHaveLength(3);
  });

  it("a WebSocket message over MAX_BODY_BYTES closes that socket with 1009, logged as the client's error, not printed as an internal one", async () => {
    const printed = vi.spyOn(console, "error");
    const ws = new WebSocket(s.app.url().replace(/^http/, "ws"), "graphql-transport-ws");
    ws.on("error", () => {});
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    await new Promise((r) => ws.once("open", r));
    ws.send("x".repeat(8192));
    expect(await closed).toBe(1009);
    await new Promise((r) => setTimeout(r, 50));
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
    expect((await s.ok(`{ sources { id } }`)).sources).toHaveLength(3);
  });
});
