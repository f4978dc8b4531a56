// Settings: read from the environment (and `.env`) once, validated, with documented defaults.
// A bad value stops the process with a message that names the variable.
import { existsSync } from "node:fs";
import { z } from "zod";
import { Cron } from "croner";

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function validCron(expr: string): boolean {
  try {
    new Cron(expr, { paused: true }).stop();
    return true;
  } catch {
    return false;
  }
}

const schema = z.object({
  /** HTTP + WebSocket port. @default 4000 */
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** Interface to listen on. @default "0.0.0.0" */
  HOST: z.string().min(1).default("0.0.0.0"),
  /** `file:<path>` selects embedded SQLite; `postgres://…` selects PostgreSQL. @default "file:./.data/crawl.db" */
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres:\/\/|postgresql:\/\/)/, "must start with file: or postgres://")
    .default("file:./.data/crawl.db"),
  /** PostgreSQL connections per instance for writes (reads use half as many again). @default 20 */
  PG_POOL_MAX: z.coerce.number().int().min(1).max(500).default(20),
  /**
   * SQLite only: who checkpoints the WAL — a thread of its own (the event loop never waits for the
   * copy) or, as SQLite does by default, the commit that fills it. @default "thread"
   */
  SQLITE_CHECKPOINTS: z.enum(["thread", "commit"]).default("thread"),
  /** Optional Redis for pub/sub across server instances. */
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "must start with redis://").optional(),
  /** Prefix of this deployment's Redis pub/sub channels (instances that share state share it). @default "crawl:" */
  REDIS_CHANNEL_PREFIX: z.string().min(1).max(100).default("crawl:"),
  /** Time zone of the crawl day. @default "Asia/Shanghai" */
  CRAWL_TZ: z.string().refine(validTimeZone, "unknown IANA time zone").default("Asia/Shanghai"),
  /** Stale sweep schedule (5- or 6-field croner syntax). @default "0 * * * * *" (every minute) */
  STALE_SWEEP_CRON: z.string().refine(validCron, "invalid cron expression").default("0 * * * * *"),
  /** Crawl days of history kept: CrawlEvent, PageReport and PostingSighting rows of older days are deleted; 0 keeps everything. @default 90 */
  HISTORY_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
  /** When the history prune runs (croner syntax, CRAWL_TZ). @default "0 30 3 * * *" (03:30 daily) */
  HISTORY_PRUNE_CRON: z.string().refine(validCron, "invalid cron expression").default("0 30 3 * * *"),
  /** Let queries and subscriptions through without a token. Writes always need one. @default true */
  PUBLIC_READS: bool.default(true),
  /** Comma-separated origins allowed by CORS; empty = same origin only. @default "" */
  CORS_ORIGINS: z.string().default(""),
  /** Largest accepted request body, bytes. @default 1048576 (1 MiB) */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  /** Longest time a client may take to send a whole request, headers and body (slow clients are cut off). */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /** Deepest accepted query. @default 12 */
  MAX_QUERY_DEPTH: z.coerce.number().int().min(2).default(12),
  /** Largest accepted query cost (graphql-armor cost model). @default 5000 */
  MAX_QUERY_COST: z.coerce.number().int().min(100).default(5000),
  /** Milliseconds over which distribution changes are coalesced per source. @default 200 */
  DISTRIBUTION_THROTTLE_MS: z.coerce.number().int().min(0).max(60_000).default(200),
  /** NATS server for the collector's NATS sink (JetStream). @default "nats://127.0.0.1:4222" */
  NATS_URL: z.string().regex(/^(nats|tls|ws|wss):\/\//, "must start with nats://").default("nats://127.0.0.1:4222"),
  /** JSON file of collector tasks created at start when missing (by name). */
  COLLECTOR_TASKS_FILE: z.string().refine((p) => existsSync(p), "file not found").optional(),
  /** Retries of a failing upstream request or sink write before the run ends as ERROR. @default 4 */
  COLLECTOR_MAX_RETRIES: z.coerce.number().int().min(0).max(20).default(4),
  /** First retry delay, doubled at each retry up to COLLECTOR_RETRY_MAX_MS. @default 500 */
  COLLECTOR_RETRY_MIN_MS: z.coerce.number().int().min(0).max(600_000).default(500),
  /** Longest retry delay. @default 30000 */
  COLLECTOR_RETRY_MAX_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /** A running task silent this long (its server died) counts as stopped and may be started again. @default 30000 */
  COLLECTOR_STALE_RUN_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(30_000),
  /** Time limit of one upstream request. @default 30000 */
  COLLECTOR_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** pino log level. @default "info" */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type Config = z.infer<typeof schema>;

/** Parse settings from an env-like object; throws an Error naming every bad variable. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}=${JSON.stringify(cleaned[String(i.path[0])])}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

/** Load `.env` (if present) into process.env without overriding what is already set. */
export function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
