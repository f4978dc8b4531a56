// What every fault scenario shares: its result shape, a check list that collects failures instead
// of throwing (a scenario reports everything it tried), progress, and raw GraphQL over HTTP.
import { SingleBar, Presets } from "cli-progress";

export type Provider = "sqlite" | "postgres";

export interface ScenarioContext {
  quick: boolean;
  /** Trials for the scenarios that repeat one fault (spider kills, server kills); undefined = their default. */
  trials?: number;
  db: Provider;
  /**
   * A shell command that restarts the PostgreSQL server under test (e.g. `pg_ctlcluster 15 main
   * restart`): the database scenario runs it mid-load. Unset: only backends are terminated (a
   * restart takes down every database of the cluster, others' too).
   */
  pgRestart?: string;
  /** Progress of the scenario's steps (a bar on a terminal, nothing elsewhere). */
  progress(total: number): { tick(n?: number): void; done(): void };
}

export interface ScenarioResult {
  /** What it tried, in one line. */
  tried: string;
  /** What survived, in one line (counts). */
  survived: string;
  /** Checks made and checks failed (the first few failures are kept). */
  checks: number;
  failures: string[];
  /** Numbers for results.json. */
  details: Record<string, unknown>;
}

export interface Scenario {
  name: string;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

/** Collects failed checks; a scenario survives when none failed. */
export class Checks {
  count = 0;
  failed = 0;
  readonly failures: string[] = [];
  ok(cond: unknown, message: string): boolean {
    this.count++;
    if (cond) return true;
    this.failed++;
    if (this.failures.length < 20) this.failures.push(message);
    return false;
  }
  equal<T>(actual: T, expected: T, message: string): boolean {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    return this.ok(a === e, `${message}: got ${a?.slice(0, 300)}, expected ${e?.slice(0, 300)}`);
  }
}

export interface HttpAnswer {
  status: number;
  /** The parsed JSON body, or undefined when it was not JSON. */
  json?: any;
  text: string;
}

/** POST a raw body to the GraphQL endpoint. */
export async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await r.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, text };
}

/** A GraphQL request with an optional bearer token. */
export function gql(url: string, query: string, variables?: Record<string, unknown>, token?: string | null, operationName?: string) {
  return post(url, JSON.stringify({ query, variables, operationName }), token ? { authorization: `Bearer ${token}` } : {});
}

/** The codes of an answer's errors (undefined for an error without one). */
export const codesOf = (a: HttpAnswer): (string | undefined)[] =>
  Array.isArray(a.json?.errors) ? a.json.errors.map((e: any) => e?.extensions?.code) : [];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Run `fn` over `items` with at most `n` in flight. */
export async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** Progress bars on a terminal; silent elsewhere (CI logs, the smoke test). */
export function progressFor(name: string): ScenarioContext["progress"] {
  return (total) => {
    if (!process.stderr.isTTY) return { tick() {}, done() {} };
    const bar = new SingleBar({ format: `${name.padEnd(14)} [{bar}] {value}/{total}`, stream: process.stderr, clearOnComplete: true }, Presets.shades_classic);
    bar.start(total, 0);
    return { tick: (n = 1) => bar.increment(n), done: () => bar.stop() };
  };
}

/** One graphql-ws socket driven by hand, so a test sees close codes and raw messages. */
export interface WsSession {
  /** The server acknowledged connection_init. */
  acked: boolean;
  /** Set when the socket closed. */
  closeCode?: number;
  /** Start an operation; resolves with its first message (next or error), or the close. */
  first(query: string, variables?: Record<string, unknown>): Promise<{ type: string; payload?: any; closeCode?: number }>;
  close(): void;
}

export async function wsSession(httpUrl: string, connectionParams?: unknown, opts: { init?: boolean } = {}): Promise<WsSession> {
  const { default: WebSocket } = await import("ws");
  const socket = new WebSocket(httpUrl.replace(/^http/, "ws"), "graphql-transport-ws");
  const waiting = new Map<string, (m: { type: string; payload?: any; closeCode?: number }) => void>();
  let nextId = 0;
  const session: WsSession = {
    acked: false,
    first(query, variables) {
      const id = String(++nextId);
      return new Promise((resolve) => {
        if (session.closeCode !== undefined) return resolve({ type: "closed", closeCode: session.closeCode });
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ id, type: "subscribe", payload: { query, variables } }));
      });
    },
    close: () => socket.close(),
  };
  await new Promise<void>((resolve) => {
    socket.on("open", () => {
      if (opts.init === false) return resolve();
      socket.send(JSON.stringify({ type: "connection_init", payload: connectionParams }));
    });
    socket.on("message", (data) => {
      const m = JSON.parse(String(data));
      if (m.type === "connection_ack") {
        session.acked = true;
        resolve();
      } else if (m.id && waiting.has(m.id)) {
        waiting.get(m.id)!(m);
        waiting.delete(m.id);
        if (m.type === "next") socket.send(JSON.stringify({ id: m.id, type: "complete" }));
      }
    });
    socket.on("close", (code) => {
      session.closeCode = code;
      for (const w of waiting.values()) w({ type: "closed", closeCode: code });
      waiting.clear();
      resolve();
    });
    socket.on("error", () => {});
  });
  return session;
}
