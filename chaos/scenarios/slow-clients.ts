// Slow clients against one server: slowloris headers and bodies (a byte at a time), HTTP readers
// that never read their response, graphql-ws sockets that never say hello, never read, or send too
// much. Meanwhile ordinary clients must keep getting answers, and the limits must hold: a request
// not fully sent within REQUEST_TIMEOUT_MS is cut off (408 / closed), a body over MAX_BODY_BYTES is
// refused with 413, a socket without connection_init is closed (4408), an oversized WebSocket
// message closes its socket (1009).
import { connect, type Socket } from "node:net";
import WebSocket from "ws";
import { startServer } from "../../server/test/harness.ts";
import { Checks, codesOf, gql, type Scenario, sleep, wsSession } from "../lib.ts";

const REQUEST_TIMEOUT_MS = 3000;

/** A raw TCP client: what it was answered, and when it was closed. */
function rawClient(port: number) {
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  const state = { received: "", closedAt: 0, opened: Date.now(), socket };
  socket.on("data", (d) => (state.received += d.toString()));
  socket.on("close", () => (state.closedAt = Date.now()));
  socket.on("error", () => {});
  return state;
}

/** Send `text` one byte every `everyMs` until it is sent or the socket closes. */
async function dribble(socket: Socket, text: string, everyMs: number) {
  for (const ch of text) {
    if (socket.destroyed || socket.closed) return;
    socket.write(ch);
    await sleep(everyMs);
  }
}

export const slowClients: Scenario = {
  name: "slow-clients",
  async run(ctx) {
    const c = new Checks();
    const s = await startServer(ctx.db, { config: { REQUEST_TIMEOUT_MS, MAX_BODY_BYTES: 64 * 1024 } });
    const port = Number(new URL(s.app.url()).port);
    const url = s.app.url();
    const n = ctx.quick ? 20 : 200;
    const bar = ctx.progress(6);
    try {
      await s.importKeywords("boss", Array.from({ length: 200 }, (_, i) => `c${i}`), ["Java", "Go", "Rust"]);
      const body = JSON.stringify({ query: `{ sources { id } }` });
      // 1. Slowloris: headers a byte at a time; 2. slow bodies: headers at once, then a byte at a time.
      const headerClients = Array.from({ length: n }, () => rawClient(port));
      const bodyClients = Array.from({ length: n }, () => rawClient(port));
      const started = Date.now();
      const dribbling = [
        ...headerClients.map((cl) => dribble(cl.socket, `POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`, 200)),
        ...bodyClients.map((cl) => {
          cl.socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
          return dribble(cl.socket, body, 500);
        }),
      ];
      // 3. Slow readers: ask for a big answer and never read it.
      const big = JSON.stringify({ query: `{ keywords(first: 500) { edges { node { id city job status source { id name } } } } }` });
      const readers = Array.from({ length: Math.ceil(n / 4) }, () => {
        const cl = rawClient(port);
        cl.socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(big)}\r\n\r\n${big}`);
        cl.socket.pause();
        return cl;
      });
      // 4. graphql-ws: sockets that never send connection_init; subscribers that never read.
      const silent = await Promise.all(Array.from({ length: Math.ceil(n / 4) }, () => wsSession(url, undefined, { init: false })));
      const stalled = await Promise.all(
        Array.from({ length: Math.ceil(n / 4) }, async () => {
          const ws = new WebSocket(url.replace(/^http/, "ws"), "graphql-transport-ws");
          await new Promise((r) => ws.once("open", r));
          ws.send(JSON.stringify({ type: "connection_init", payload: {} }));
          await new Promise((r) => ws.once("message", r));
          ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: `subscription { keywordChanged { id status lastCompletedPage source { id } } }` } }));
          (ws as unknown as { _socket: Socket })._socket.pause(); // never read again
          return ws;
        }),
      );
      bar.tick();

      // Meanwhile: ordinary work — claims, page reports, stats, and a live subscriber.
      const watcher = s.ws(s.tokens.viewer);
      let lastSeen: any;
      const unsubscribe = watcher.subscribe(
        { query: `subscription { crawlStatusDistribution(source: "boss") { byStatus { completed crawling } pagesCrawled } }` },
        { next: (v) => (lastSeen = v.data), error: () => {}, complete: () => {} },
      );
      let served = 0;
      let refused = 0;
      const claims = (await s.ok(`mutation { claimKeywords(source: "boss", crawlerId: "steady", limit: 100) { leaseToken keyword { id } } }`, {}, s.tokens.spider)).claimKeywords;
      for (const page of [1, 2, 3]) {
        await Promise.all(
          claims.map(async (cl: any) => {
            const r = await gql(url, `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`, { i: { keywordId: cl.keyword.id, leaseToken: cl.leaseToken, page, jobsFound: 2 } }, s.tokens.spider);
            r.json?.data?.reportPageProgress ? served++ : refused++;
          }),
        );
      }
      for (let i = 0; i < 50; i++) (await gql(url, `{ stats(source: "boss") { pagesCrawled } }`)).json?.data ? served++ : refused++;
      c.equal(refused, 0, "ordinary requests refused while slow clients held connections");
      bar.tick();
      // The live subscriber saw the final counts (the stalled ones did not hold it up).
      for (let i = 0; i < 100 && lastSeen?.crawlStatusDistribution?.byStatus?.completed !== 100; i++) await sleep(50);
      c.equal(lastSeen?.crawlStatusDistribution, { byStatus: { completed: 100, crawling: 0 }, pagesCrawled: 300 }, "live subscriber's final distribution");
      unsubscribe();
      bar.tick();

      // 5. The limits: slow senders are cut off after REQUEST_TIMEOUT_MS (checked every second).
      // (Unlimited, they would take 20 s for their headers, 15 s for their bodies.)
      const slow = [...headerClients, ...bodyClients];
      for (let i = 0; i < 100 && slow.some((cl) => !cl.closedAt); i++) await sleep(100);
      const cut = slow.filter((cl) => cl.closedAt && cl.closedAt - started < 12_000);
      c.equal(cut.length, slow.length, `slow senders cut off (REQUEST_TIMEOUT_MS ${REQUEST_TIMEOUT_MS} ms) before they could finish`);
      const slowest = Math.max(...slow.map((cl) => (cl.closedAt || Date.now()) - started));
      const with408 = slow.filter((cl) => cl.received.startsWith("HTTP/1.1 408")).length;
      c.equal(with408, slow.length, "slow senders answered 408 before the close");
      bar.tick();
      // A body over MAX_BODY_BYTES: 413 at once, however slowly it would come.
      const huge = rawClient(port);
      huge.socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${10 * 1024 * 1024}\r\n\r\n{"query":`);
      for (let i = 0; i < 40 && !huge.received; i++) await sleep(50);
      c.ok(huge.received.startsWith("HTTP/1.1 413") && huge.received.includes("BAD_USER_INPUT"), `oversized body → ${huge.received.slice(0, 80)}`);
      huge.socket.destroy();
      // A WebSocket message over the limit closes that socket (1009), not the server.
      const bigWs = new WebSocket(url.replace(/^http/, "ws"), "graphql-transport-ws");
      bigWs.on("error", () => {}); // the client sees its own socket closed
      const bigClose = new Promise<number>((r) => bigWs.once("close", (code) => r(code)));
      await new Promise((r) => bigWs.once("open", r));
      bigWs.send("x".repeat(100 * 1024));
      c.equal(await bigClose, 1009, "oversized WebSocket message closes its socket");
      // Sockets that never sent connection_init are closed by graphql-ws (4408) after 3 s.
      for (let i = 0; i < 40 && silent.some((w) => w.closeCode === undefined); i++) await sleep(100);
      c.ok(silent.every((w) => w.closeCode === 4408), `sockets without connection_init closed 4408: ${silent.filter((w) => w.closeCode === 4408).length}/${silent.length}`);
      bar.tick();
      // The server still answers, and the readers that never read got their answer queued, not the server stuck.
      const after = await gql(url, `{ stats(source: "boss") { pagesCrawled } }`);
      c.ok(after.json?.data?.stats?.pagesCrawled === 300 && !codesOf(after).length, "server answers after the slow clients");
      for (const r of readers) r.socket.destroy();
      for (const w of stalled) w.terminate();
      bar.tick();
      bar.done();
      return {
        tried: `${n} slowloris header senders + ${n} slow-body senders (a byte every 200/500 ms), ${readers.length} HTTP readers that never read, ${silent.length} graphql-ws sockets without connection_init, ${stalled.length} subscribers that never read, a 10 MiB body, a 100 KiB WebSocket message`,
        survived: `${served} ordinary requests answered, 0 refused; live subscriber saw the final counts; ${cut.length}/${slow.length} slow senders cut off at REQUEST_TIMEOUT_MS ${REQUEST_TIMEOUT_MS / 1000} s (last after ${(slowest / 1000).toFixed(1)} s; ${with408} with 408); 413 for the big body; 1009 for the big message; ${silent.filter((w) => w.closeCode === 4408).length}/${silent.length} silent sockets closed 4408`,
        checks: c.count,
        failures: c.failures,
        details: { slowSenders: slow.length, cutOff: cut.length, with408, slowestCutMs: slowest, served },
      };
    } finally {
      await s.close();
    }
  },
};
