// buildApp(): the whole server — GraphQL over HTTP and WebSocket on one port, GraphiQL, the
// dashboard's static files, and the scheduler — with { start, stop } so tests boot the real thing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import type { GraphQLError, ValidationContext } from "graphql";
import { createYoga } from "graphql-yoga";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { useCSRFPrevention } from "@graphql-yoga/plugin-csrf-prevention";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { costLimitPlugin } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxTokensPlugin } from "@escape.tech/graphql-armor-max-tokens";
import sirv from "sirv";
import type { Logger } from "pino";
import { bearer, type Principal, TokenVerifier } from "./auth/tokens.ts";
import { registerCollectorMetrics } from "./collector/metrics.ts";
import { CollectorService } from "./collector/service.ts";
import { type Config, parseConfig } from "./config.ts";
import type { Context, Services } from "./context.ts";
import { ActivityReader } from "./crawl/activity.ts";
import { CrawlCalendar, type Clock, systemClock } from "./crawl/crawl-day.ts";
import { crawlStats } from "./crawl/stats.ts";
import { CrawlStore } from "./crawl/store.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { seedSources } from "./db/seed.ts";
import { apiError, databaseUnavailable, ErrorCode, isDatabaseUnavailable } from "./errors.ts";
import { openBus } from "./live/bus.ts";
import { DistributionFeed } from "./live/distribution-feed.ts";
import { GRAPHIQL_EXAMPLE } from "./graphiql-example.ts";
import { dayRollover } from "./jobs/day-rollover.ts";
import { historyPrune } from "./jobs/history-prune.ts";
import { Scheduler } from "./jobs/scheduler.ts";
import { staleSweep } from "./jobs/stale-sweep.ts";
import { useErrorCodes } from "./http/use-error-codes.ts";
import { attachWebSocket } from "./http/websocket.ts";
import { createLogger } from "./log.ts";
import { Metrics } from "./metrics.ts";
import { schema } from "./schema/index.ts";

export interface BuildAppOptions {
  /** Settings; missing ones come from the environment. */
  config?: Partial<Config> | Config;
  /** Time source (tests inject a ManualClock to cross midnight). */
  clock?: Clock;
  logger?: Logger;
  /** Run the cron jobs (default true). Tests may drive the jobs directly instead. */
  scheduler?: boolean;
}

export interface App {
  services: Services;
  /** Listen; resolves with the bound port (0 = any free port). */
  start(port?: number, host?: string): Promise<number>;
  stop(): Promise<void>;
  url(path?: string): string;
  /** Run a scheduled job now: keywords changed (stale-sweep, day-rollover) or rows deleted (history-prune). */
  runJob(name: "stale-sweep" | "day-rollover" | "history-prune"): Promise<number>;
}

const here = dirname(fileURLToPath(import.meta.url));
/** How long stop() lets requests in flight finish. */
const SHUTDOWN_GRACE_MS = 5_000;
/** How long an idle keep-alive connection is kept open for the client. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const webRoot = join(here, "../../web");

export async function buildApp(options: BuildAppOptions = {}): Promise<App> {
  const config: Config = { ...parseConfig(), ...(options.config ?? {}) } as Config;
  const log = options.logger ?? createLogger(config.LOG_LEVEL);

  const applied = await migrate(config.DATABASE_URL);
  if (applied.length) log.info({ migrations: applied }, "database migrated");
  const database = await openDatabase(config.DATABASE_URL, { poolMax: config.PG_POOL_MAX, sqliteCheckpoints: config.SQLITE_CHECKPOINTS });
  const seeded = await seedSources(database);
  if (seeded) log.info({ sources: seeded }, "sources seeded");

  const calendar = new CrawlCalendar(options.clock ?? systemClock, config.CRAWL_TZ);
  const store = new CrawlStore(database, calendar);
  const live = await openBus({ redisUrl: config.REDIS_URL, channelPrefix: config.REDIS_CHANNEL_PREFIX, log: log.child({ role: "bus" }) });
  const bus = live.bus;
  const distribution = new DistributionFeed(
    (sourceId) => crawlStats(database, calendar, sourceId),
    config.DISTRIBUTION_THROTTLE_MS,
    log.child({ role: "distribution" }),
  );
  const activity = new ActivityReader(database, calendar, config.CRAWL_TZ);
  const collector = new CollectorService(database, calendar, bus, config, log.child({ role: "collector" }));
  if (config.COLLECTOR_TASKS_FILE) {
    const created = await collector.seedFromFile(config.COLLECTOR_TASKS_FILE);
    if (created) log.info({ tasks: created, file: config.COLLECTOR_TASKS_FILE }, "collector tasks seeded");
  }
  const services: Services = { config, database, calendar, store, bus, distribution, activity, collector, log };
  const verifier = new TokenVerifier(database);

  const metrics = new Metrics({
    subscriptions: () => distribution.subscriberCount(),
    sockets: () => websocket.stats(),
    checkpoints: database.checkpoints,
    keywordsByStatus: async () => {
      const rows = [];
      for (const s of await database.reader.source.findMany({ select: { id: true } })) {
        const st = await crawlStats(database, calendar, s.id);
        for (const [status, n] of Object.entries(st.byStatus)) rows.push({ source: s.id, status: status.toUpperCase(), n });
      }
      return rows;
    },
  });

  registerCollectorMetrics(metrics.registry, collector);

  // Store → bus (shared across instances when the bus is) → this instance's live feeds.
  store.onChange((change) => {
    metrics.record(change);
    void bus.publish("crawlChanged", change);
  });
  store.onCoalesce((kind, requests) => metrics.recordCoalesced(kind, requests));
  const changes = bus.subscribe("crawlChanged");
  void (async () => {
    for await (const change of changes) {
      activity.observe(change); // first: a dashboard woken by the distribution reads what is new
      distribution.changed(change.sourceId);
    }
  })();
  // Changes missed while Redis was away: every watched distribution is recomputed.
  live.onResync(() => distribution.refreshAll());
  await live.ready();

  async function principalFor(token: string | null): Promise<Principal | null> {
    if (!token) return null;
    const p = await verifier.verify(token).catch((e: unknown) => {
      throw isDatabaseUnavailable(e) ? databaseUnavailable() : e;
    });
    if (!p) throw apiError(ErrorCode.UNAUTHENTICATED, "unknown or revoked token");
    return p;
  }

  // graphql-armor throws its refusals out of validation; report them as validation errors instead,
  // so they get a code (BAD_USER_INPUT) like every other refusal.
  const reportLimit = {
    propagateOnRejection: false,
    onReject: [(ctx: ValidationContext | null, err: GraphQLError) => ctx?.reportError(err)],
  };

  const yoga = createYoga<{ req?: IncomingMessage; connectionParams?: Record<string, unknown>; principal?: Principal | null }>({
    schema,
    logging: log.child({ role: "yoga" }),
    graphiql: { subscriptionsProtocol: "WS", defaultQuery: GRAPHIQL_EXAMPLE, title: "Crawl control plane" },
    renderGraphiQL,
    // handle() below refuses a POST without Content-Length (411) or over MAX_BODY_BYTES (413)
    // before Yoga sees it, and Node's parser never reads past Content-Length (it rejects chunked
    // bodies that also declare one), so Yoga's own limit is redundant: it re-streams every body
    // through a TransformStream, which costs ~10–25% of a small request's CPU.
    maxRequestBodySize: false,
    cors: { origin: config.CORS_ORIGINS ? config.CORS_ORIGINS.split(",").map((s) => s.trim()) : [], credentials: false },
    plugins: [
      metrics.plugin(),
      useErrorCodes(),
      useCSRFPrevention({ requestHeaders: ["x-graphql-yoga-csrf", "authorization"] }),
      maxTokensPlugin({ n: 2000 }),
      maxDepthPlugin({ n: config.MAX_QUERY_DEPTH, flattenFragments: true, ...reportLimit }),
      maxAliasesPlugin({ n: 20, ...reportLimit }),
      costLimitPlugin({ maxCost: config.MAX_QUERY_COST, ...reportLimit }),
    ],
    context: async (initial): Promise<Context> => {
      const principal =
        initial.principal !== undefined
          ? initial.principal
          : await principalFor(bearer(initial.request?.headers.get("authorization")));
      return { ...services, db: database.reader, principal };
    },
  });

  // The built dashboard (npm start and npm run demo build it first), looked for until it appears.
  // Without a build: a notice page rather than the raw web/ sources (which a browser cannot run).
  let dashboard: ReturnType<typeof sirv> | undefined;
  const serveWeb = (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (!dashboard && existsSync(join(webRoot, "dist/index.html"))) dashboard = sirv(join(webRoot, "dist"), { single: true, etag: true });
    if (dashboard) return dashboard(req, res, next);
    res
      .writeHead(503, { "content-type": "text/html; charset=utf-8" })
      .end(
        `<!doctype html><title>Crawl control plane</title><h1>Dashboard not built</h1>` +
          `<p>Run <code>npm run build:web</code> (<code>npm start</code> builds it before it starts). ` +
          `The API and GraphiQL are at <a href="${yoga.graphqlEndpoint}">${yoga.graphqlEndpoint}</a>.</p>`,
      );
  };

  /** A refusal made before GraphQL sees the request, in GraphQL's error shape. */
  function refuse(res: ServerResponse, status: number, message: string) {
    const body = { errors: [{ message, extensions: { code: ErrorCode.BAD_USER_INPUT } }] };
    res.writeHead(status, { "content-type": "application/json", connection: "close" }).end(JSON.stringify(body));
  }

  function handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === yoga.graphqlEndpoint || path.startsWith(`${yoga.graphqlEndpoint}/`)) {
      const length = Number(req.headers["content-length"] ?? 0);
      if (req.method === "POST" && req.headers["content-length"] === undefined) {
        refuse(res, 411, "a POST needs a Content-Length header");
        return;
      }
      if (length > config.MAX_BODY_BYTES) {
        refuse(res, 413, `request body over MAX_BODY_BYTES (${config.MAX_BODY_BYTES} bytes)`);
        req.resume();
        return;
      }
      void yoga.requestListener(req, res);
      return;
    }
    if (path === "/metrics") {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
        (err) => {
          log.error({ err }, "metrics collection failed");
          res.writeHead(500).end();
        },
      );
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
      return;
    }
    serveWeb(req, res, () => {
      res.writeHead(404).end();
    });
  }

  // Slow clients (a body or headers sent a byte at a time) get REQUEST_TIMEOUT_MS in all, checked
  // every second, then a 408 and a closed socket; they never hold a connection for Node's 5 minutes.
  const server: Server = createServer({ requestTimeout: config.REQUEST_TIMEOUT_MS, headersTimeout: config.REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, handle);
  // An idle keep-alive connection is closed by the client, not by us: a server that closes it
  // (Node's default after 5 s) races a client reusing it, whose request then meets a reset
  // (ECONNRESET). Clients (undici, browsers, proxies) drop idle sockets well within a minute.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const websocket = attachWebSocket({
    server,
    yoga,
    principalFor,
    publicReads: config.PUBLIC_READS,
    maxPayload: config.MAX_BODY_BYTES,
    log: log.child({ role: "websocket" }),
  });

  /** The history prune; returns the rows it deleted. */
  const pruneHistory = async () => {
    const result = await historyPrune(database, calendar, config.HISTORY_RETENTION_DAYS, log.child({ role: "scheduler" }));
    if (result) metrics.historyPruned(result.deleted);
    return result?.total ?? 0;
  };
  const scheduler = new Scheduler(store, database, log.child({ role: "scheduler" }), {
    staleSweepCron: config.STALE_SWEEP_CRON,
    historyPruneCron: config.HISTORY_PRUNE_CRON,
    pruneHistory,
    timeZone: config.CRAWL_TZ,
    onRun: (job, outcome, changed) => metrics.jobRun(job, outcome, changed),
  });

  let port = 0;
  return {
    services,
    url: (path = "/graphql") => `http://127.0.0.1:${port}${path}`,
    async start(listenPort = config.PORT, host = config.HOST) {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(listenPort, host, () => resolve());
      });
      port = (server.address() as AddressInfo).port;
      if (options.scheduler !== false) {
        scheduler.start();
        await collector.startScheduling();
      }
      log.info({ port, database: database.provider, bus: live.kind, timeZone: config.CRAWL_TZ }, `listening on http://localhost:${port}/graphql`);
      return port;
    },
    async stop() {
      await scheduler.stop();
      await collector.close();
      distribution.close();
      await changes.return?.();
      await websocket.close();
      // Stop accepting, let requests in flight finish (a spider's report gets its answer), then
      // cut what is left after the grace period.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(grace);
      // After the last request: what it changed still reaches the other instances.
      await live.close();
      await database.close();
    },
    async runJob(name) {
      if (name === "history-prune") {
        const deleted = await pruneHistory();
        metrics.jobRun(name, "ok");
        return deleted;
      }
      const changed = await (name === "stale-sweep" ? staleSweep(store, log) : dayRollover(store, log));
      metrics.jobRun(name, "ok", changed);
      return changed;
    },
  };
}
