import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";

describe("parseConfig", () => {
  it("has documented defaults", () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      PORT: 4000,
      DATABASE_URL: "file:./.data/crawl.db",
      CRAWL_TZ: "Asia/Shanghai",
      STALE_SWEEP_CRON: "0 * * * * *",
      PUBLIC_READS: true,
    });
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.REDIS_CHANNEL_PREFIX).toBe("crawl:");
    expect(c.PG_POOL_MAX).toBe(20);
  });

  it("names every bad variable", () => {
    expect(() => parseConfig({ PORT: "http", CRAWL_TZ: "Mars/Olympus", STALE_SWEEP_CRON: "every minute", DATABASE_URL: "mysql://x" }))
      .toThrowError(/PORT=.*\n.*DATABASE_URL=|PORT/);
    try {
      parseConfig({ PORT: "http", CRAWL_TZ: "Mars/Olympus", STALE_SWEEP_CRON: "every minute", DATABASE_URL: "mysql://x" });
    } catch (e) {
      const msg = (e as Error).message;
      for (const v of ["PORT", "CRAWL_TZ", "STALE_SWEEP_CRON", "DATABASE_URL"]) expect(msg).toContain(v);
    }
  });

  it("accepts PostgreSQL URLs and 6-field cron", () => {
    const c = parseConfig({ DATABASE_URL: "postgres://u@h/db", STALE_SWEEP_CRON: "*/5 * * * * *", PUBLIC_READS: "false" });
    expect(c.DATABASE_URL).toBe("postgres://u@h/db");
    expect(c.PUBLIC_READS).toBe(false);
  });

  it("checks the Redis settings", () => {
    expect(parseConfig({ REDIS_URL: "redis://h:6379", REDIS_CHANNEL_PREFIX: "prod:" })).toMatchObject({ REDIS_URL: "redis://h:6379", REDIS_CHANNEL_PREFIX: "prod:" });
    expect(() => parseConfig({ REDIS_URL: "http://h:6379" })).toThrowError(/REDIS_URL/);
    expect(() => parseConfig({ REDIS_CHANNEL_PREFIX: "x".repeat(101) })).toThrowError(/REDIS_CHANNEL_PREFIX/);
    expect(() => parseConfig({ PG_POOL_MAX: "0" })).toThrowError(/PG_POOL_MAX/);
  });
});
