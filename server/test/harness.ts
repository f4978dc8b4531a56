// Boots the real server (buildApp) on a fresh database and talks to it the way spiders and the
// dashboard do: GraphQL over HTTP with bearer tokens, and graphql-ws over WebSocket.
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { pino } from "pino";
import { Prisma } from "../../generated/sqlite/client.ts";
import { type App, buildApp } from "../src/app.ts";
import { createToken, Role } from "../src/auth/tokens.ts";
import type { Config } from "../src/config.ts";
import { ManualClock, systemClock } from "../src/crawl/crawl-day.ts";
import { createTestDatabase, type TestDatabase } from "./databases.ts";

export interface GqlResult<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; [k: string]: unknown } }[];
}

export interface TestServer {
  app: App;
  db: TestDatabase;
  clock: ManualClock;
  tokens: { admin: string; spider: string; viewer: string };
  /** Raw GraphQL over HTTP. `token: null` sends no Authorization header. */
  request<T = any, V = Record<string, unknown>>(
    query: string | TypedDocumentNode<T, V>,
    variables?: V,
    opts?: { token?: string | null; headers?: Record<string, string>; operationName?: string },
  ): Promise<GqlResult<T>>;
  /** Like request, but throws on errors and returns data. */
  ok<T = any, V = Record<string, unknown>>(
    query: string | TypedDocumentNode<T, V>,
    variables?: V,
    token?: string | null,
    operationName?: string,
  ): Promise<T>;
  /** The error code of a request expected to fail. */
  code<V = Record<string, unknown>>(query: string | TypedDocumentNode<any, V>, variables?: V, token?: string | null): Promise<string | undefined>;
  ws(token?: string | null): Client;
  /** Import keywords as admin. */
  importKeywords(source: string, cities: string[], jobs: string[]): Promise<{ created: number; existing: number }>;
  close(): Promise<void>;
}

export async function startServer(
  provider: "sqlite" | "postgres" = "sqlite",
  opts: { config?: Partial<Config>; scheduler?: boolean; clock?: ManualClock; realClock?: boolean } = {},
): Promise<TestServer> {
  const db = await createTestDatabase(provider);
  // A fixed mid-morning in Asia/Shanghai: tests that advance the clock never cross a midnight.
  const clock = opts.clock ?? new ManualClock(new Date("2026-11-29T02:00:00Z"));
  const app = await buildApp({
    config: { DATABASE_URL: db.url, LOG_LEVEL: "silent", DISTRIBUTION_THROTTLE_MS: 50, ...opts.config },
    clock: opts.realClock ? systemClock : clock,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    scheduler: opts.scheduler ?? false,
  });
  await app.start(0, "127.0.0.1");
  const database = app.services.database;
  const tokens = {
    admin: (await createToken(database, Role.ADMIN, "test-admin")).token,
    spider: (await createToken(database, Role.SPIDER, "test-spider")).token,
    viewer: (await createToken(database, Role.VIEWER, "test-viewer")).token,
  };
  const clients: Client[] = [];

  const request: TestServer["request"] = async (query, variables, o = {}) => {
    const token = o.token === undefined ? tokens.admin : o.token;
    const res = await fetch(app.url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...o.headers,
      },
      body: JSON.stringify({ query: typeof query === "string" ? query : print(query), variables, operationName: o.operationName }),
    });
    const body = (await res.json()) as GqlResult<any>;
    return { ...body, status: res.status };
  };

  const server: TestServer = {
    app,
    db,
    clock,
    tokens,
    request,
    async ok(query, variables, token, operationName) {
      const r = await request(query, variables, { token, operationName });
      if (r.errors?.length) throw new Error(`GraphQL error: ${JSON.stringify(r.errors)}`);
      return r.data as any;
    },
    async code(query, variables, token) {
      const r = await request(query, variables as any, { token });
      return r.errors?.[0]?.extensions?.code;
    },
    ws(token) {
      const t = token === undefined ? tokens.viewer : token;
      const c = createClient({
        url: app.url().replace(/^http/, "ws"),
        webSocketImpl: WebSocket,
        connectionParams: t ? { Authorization: `Bearer ${t}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(c);
      return c;
    },
    async importKeywords(source, cities, jobs) {
      const d = await server.ok<{ importKeywords: { created: number; existing: number } }>(
        `mutation($s: ID!, $c: [String!]!, $j: [String!]!) { importKeywords(source: $s, cities: $c, jobs: $j) { created existing } }`,
        { s: source, c: cities, j: jobs },
      );
      return d.importKeywords;
    },
    async close() {
      await Promise.all(clients.map((c) => c.dispose()));
      await app.stop();
      await db.drop();
    },
  };
  return server;
}

/** Cities numbered c1…cN, for tests that need N keywords with one job. */
export const cities = (n: number, prefix = "city") => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

/** Everything a "nothing changed" assertion compares. */
export async function snapshot(server: TestServer) {
  const db = server.app.services.database.reader;
  const [keywords, reports, events, sources] = await Promise.all([
    db.keyword.findMany({ orderBy: { id: "asc" } }),
    db.pageReport.findMany({ orderBy: [{ keywordId: "asc" }, { crawlDate: "asc" }, { page: "asc" }] }),
    db.crawlEvent.count(),
    db.source.findMany({ orderBy: { id: "asc" } }),
  ]);
  return { keywords, reports, events, sources };
}

/** Make a keyword look silent for `seconds` (as if its spider died that long ago). */
export async function ageHeartbeat(server: TestServer, keywordId: string, seconds: number) {
  const at = new Date(server.app.services.calendar.now().getTime() - seconds * 1000);
  await server.app.services.database.transaction((tx) =>
    tx.execute(Prisma.sql`UPDATE "Keyword" SET "heartbeatAt" = ${at} WHERE "id" = ${Number(keywordId)}`),
  );
}

/**
 * A time zone where it is around noon now, for tests on the real clock: their crawl day cannot
 * turn while they run, whatever time CI starts them.
 */
export function middayTimeZone(now = new Date()): string {
  let offset = 12 - now.getUTCHours();
  if (offset > 14) offset -= 24;
  if (offset < -12) offset += 24;
  // Etc/GMT names are sign-inverted: Etc/GMT-8 is UTC+8.
  return offset === 0 ? "Etc/GMT" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
}

/** Collects a subscription's messages; `next(n)` waits until n have arrived. */
export function collect(client: Client, query: string, variables: Record<string, unknown>) {
  const messages: any[] = [];
  const errors: unknown[] = [];
  let wake: () => void = () => {};
  const stop = client.subscribe(
    { query, variables },
    {
      next: (m) => {
        if (m.errors) errors.push(...m.errors);
        else messages.push(m.data);
        wake();
      },
      error: (e) => {
        errors.push(e);
        wake();
      },
      complete: () => wake(),
    },
  );
  return {
    messages,
    errors,
    stop,
    async until(pred: () => boolean, ms = 5000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`subscription: condition not met; got ${JSON.stringify(messages.at(-1))} ${JSON.stringify(errors)}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
    },
  };
}
