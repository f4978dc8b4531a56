import { describe, expect, it } from "vitest";
import { CrawlCalendar, crawlDay, ManualClock } from "./crawl-day.ts";

describe("crawlDay", () => {
  it("is the calendar day in the configured time zone, not UTC", () => {
    // 2026-11-29 17:30 UTC is already 2026-11-30 01:30 in Shanghai.
    const at = new Date("2026-11-29T17:30:00Z");
    expect(crawlDay(at, "Asia/Shanghai")).toBe("2026-11-30");
    expect(crawlDay(at, "UTC")).toBe("2026-11-29");
    expect(crawlDay(at, "America/New_York")).toBe("2026-11-29");
  });

  it("turns at midnight of the time zone", () => {
    const clock = new ManualClock(new Date("2026-11-29T15:59:59.999Z")); // 23:59:59.999 in Shanghai
    const cal = new CrawlCalendar(clock, "Asia/Shanghai");
    expect(cal.today()).toBe("2026-11-29");
    clock.advance(1);
    expect(cal.today()).toBe("2026-11-30");
  });
});
