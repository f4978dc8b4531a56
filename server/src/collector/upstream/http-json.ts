// The HTTP JSON upstream: `GET <url>?offset=O&limit=L` → `{ "data": { "total": N, "data": [record, …] } }`,
// records oldest first, each with a key field (`id` unless configured), a publish date (`aae397`,
// YYYY-MM-DD or YYYYMMDD) and a collect time (`Collect_time`, YYYY-MM-DD HH:mm:ss).
import { z } from "zod";
import { parseDay } from "../freshness.ts";
import { type Upstream, UpstreamError, type UpstreamPage, type UpstreamRecord } from "./upstream.ts";

export interface HttpJsonUpstreamOptions {
  url: string;
  /** Field holding the record's key. @default "id" */
  idField?: string;
  /** Field holding the publish date. @default "aae397" */
  publishField?: string;
  /** Field holding the collect time, used when the publish date is missing. @default "Collect_time" */
  collectField?: string;
  /** Per-request time limit, ms. @default 30000 */
  timeoutMs?: number;
}

const pageSchema = z.object({
  data: z.object({
    total: z.number().int().min(0),
    data: z.array(z.record(z.string(), z.unknown())),
  }),
});

/** At most this much of an error body goes into the message. */
const BODY_EXCERPT = 200;

export class HttpJsonUpstream implements Upstream {
  private readonly idField: string;
  private readonly publishField: string;
  private readonly collectField: string;
  private readonly timeoutMs: number;

  constructor(private readonly o: HttpJsonUpstreamOptions) {
    this.idField = o.idField ?? "id";
    this.publishField = o.publishField ?? "aae397";
    this.collectField = o.collectField ?? "Collect_time";
    this.timeoutMs = o.timeoutMs ?? 30_000;
  }

  private async get(offset: number, limit: number, signal?: AbortSignal) {
    const url = new URL(this.o.url);
    url.searchParams.set("offset", String(offset));
    url.searchParams.set("limit", String(limit));
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const where = `offset=${offset} limit=${limit}`;
    let res: Response;
    try {
      res = await fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, headers: { accept: "application/json" } });
    } catch (e) {
      if (signal?.aborted) throw e;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : ((e as Error).cause as Error)?.message ?? (e as Error).message;
      throw new UpstreamError(`upstream request failed (${where}): ${why}`, true);
    }
    const text = await res.text();
    if (!res.ok) {
      // 5xx and 429 may pass; any other 4xx means the request itself is wrong.
      const retryable = res.status >= 500 || res.status === 429;
      throw new UpstreamError(`upstream answered HTTP ${res.status} (${where}): ${text.slice(0, BODY_EXCERPT)}`, retryable);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamError(`upstream sent invalid JSON (${where}): ${text.slice(0, BODY_EXCERPT)}`, true);
    }
    const parsed = pageSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamError(`upstream answer is not {data:{total,data:[…]}} (${where}): ${parsed.error.issues[0]?.message}`, false);
    }
    return parsed.data.data;
  }

  async total(signal?: AbortSignal): Promise<number> {
    return (await this.get(0, 1, signal)).total;
  }

  async fetch(offset: number, limit: number, signal?: AbortSignal): Promise<UpstreamPage> {
    const page = await this.get(offset, limit, signal);
    const expected = Math.max(0, Math.min(limit, page.total - offset));
    if (page.data.length < expected) {
      throw new UpstreamError(`upstream sent ${page.data.length} records at offset ${offset}, expected ${expected}`, true);
    }
    const records: UpstreamRecord[] = page.data.slice(0, expected).map((data, i) => {
      const id = data[this.idField];
      return {
        offset: offset + i,
        // A record without a key still gets a stable one: its offset (the upstream only appends).
        key: typeof id === "string" || typeof id === "number" ? String(id) : `@${offset + i}`,
        day: parseDay(data[this.publishField]) ?? parseDay(data[this.collectField]),
        data,
      };
    });
    return { total: page.total, records };
  }
}
