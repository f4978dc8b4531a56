// Spider settings: read from the environment (and `.env`) once, validated, defaults documented.
// A bad value stops the spider with a message naming the variable.
import { z } from "zod";
import type { SiteId } from "./sites/site.ts";

const url = z.string().regex(/^https?:\/\/[^\s]+$/, "must be an http(s) URL").transform((u) => u.replace(/\/+$/, ""));
const ms = (min: number, fallback: number) => z.coerce.number().int().min(min).max(3_600_000).default(fallback);

const schema = z.object({
  /** The control plane's GraphQL endpoint. @default "http://127.0.0.1:4000/graphql" */
  CRAWL_API_URL: url.default("http://127.0.0.1:4000/graphql"),
  /** A spider (or admin) token: `npm run token -- create --role spider`. Required. */
  CRAWL_TOKEN: z.string({ error: "is required (npm run token -- create --role spider)" }).min(1),
  /** Where the sites live; each site's API is under /<site> (the simulator's layout). @default "http://127.0.0.1:4100" */
  SITE_BASE_URL: url.default("http://127.0.0.1:4100"),
  /** Per-site overrides of `${SITE_BASE_URL}/<site>`. */
  BOSS_BASE_URL: url.optional(),
  QCWY_BASE_URL: url.optional(),
  ZHILIAN_BASE_URL: url.optional(),
  /** Keywords crawled at once per process. @default 2 */
  SPIDER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(2),
  /** Requests per second to the site, per process. @default 2 */
  SITE_RATE_PER_SEC: z.coerce.number().min(0.01).max(10_000).default(2),
  /** A site request that takes longer is abandoned (and retried). @default 15000 */
  SITE_TIMEOUT_MS: ms(10, 15_000),
  /** Retries of one page on 5xx, timeouts, network errors and malformed pages before the keyword FAILs. @default 5 */
  SITE_RETRIES: z.coerce.number().int().min(0).max(50).default(5),
  /** First backoff delay (site and server); it doubles per attempt, with jitter. @default 500 */
  RETRY_MIN_MS: ms(1, 500),
  /** Longest backoff delay. @default 10000 */
  RETRY_MAX_MS: ms(1, 10_000),
  /** How long a call to the server is retried (server down, 5xx, network) before the spider gives up the keyword. @default 180000 */
  SERVER_RETRY_MS: ms(100, 180_000),
  /** A server call that takes longer is abandoned (and retried). @default 30000 */
  SERVER_TIMEOUT_MS: ms(100, 30_000),
  /** Wait between claims when nothing is left (without --once). @default 5000 */
  SPIDER_POLL_MS: ms(10, 5_000),
  /** pino level. @default "info" */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type SpiderConfig = z.infer<typeof schema>;

export function parseSpiderConfig(env: Record<string, string | undefined> = process.env): SpiderConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}=${JSON.stringify(cleaned[String(i.path[0])] ?? "")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

/** The site's base URL: its override, else `${SITE_BASE_URL}/<site>`. */
export function siteBaseUrl(config: SpiderConfig, site: SiteId): string {
  const override = { boss: config.BOSS_BASE_URL, qcwy: config.QCWY_BASE_URL, zhilian: config.ZHILIAN_BASE_URL }[site];
  return override ?? `${config.SITE_BASE_URL}/${site}`;
}
