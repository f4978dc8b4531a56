// Faults a site can be told to show, per site: from the environment (SIM_FAULTS_<SITE>, e.g.
// "error=0.2,timeout=0.05,latency=20") or at run time by query (POST /_sim/faults?site=boss&ban=1).
import { z } from "zod";

export const Faults = z.object({
  /** Share of requests answered with HTTP 503. */
  error: z.coerce.number().min(0).max(1).default(0),
  /** Share of requests never answered (the client's timeout must fire). */
  timeout: z.coerce.number().min(0).max(1).default(0),
  /** Share of requests answered with the site's ban/captcha page (1 = a permanent ban). */
  ban: z.coerce.number().min(0).max(1).default(0),
  /** Share of requests whose JSON is cut off half-way. */
  truncate: z.coerce.number().min(0).max(1).default(0),
  /** Delay before every answer, in ms. */
  latency: z.coerce.number().int().min(0).max(60_000).default(0),
});
export type Faults = z.infer<typeof Faults>;

export const NO_FAULTS: Faults = Faults.parse({});

/** "error=0.2,latency=10" → Faults; throws naming the bad key. */
export function parseFaults(text: string | Record<string, string>): Faults {
  const entries =
    typeof text === "string"
      ? text.split(",").map((kv) => kv.trim()).filter(Boolean).map((kv) => kv.split("=", 2) as [string, string])
      : Object.entries(text);
  const known = new Set(Object.keys(Faults.shape));
  for (const [k] of entries) if (!known.has(k)) throw new Error(`unknown fault "${k}" (known: ${[...known].join(", ")})`);
  const r = Faults.safeParse(Object.fromEntries(entries));
  if (!r.success) throw new Error(r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return r.data;
}

export type Outcome = "ok" | "error" | "timeout" | "ban" | "truncate";

/** What this request gets: one draw decides, bans first (a banned client sees nothing else). */
export function draw(f: Faults, random: () => number): Outcome {
  if (f.ban > 0 && random() < f.ban) return "ban";
  const r = random();
  if (r < f.error) return "error";
  if (r < f.error + f.timeout) return "timeout";
  if (r < f.error + f.timeout + f.truncate) return "truncate";
  return "ok";
}
