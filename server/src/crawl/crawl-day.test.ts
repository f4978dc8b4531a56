import { describe, expect, it } from "vitest";
import { CrawlCalendar, crawlDay, dayStart, ManualClock } from "./crawl-day.ts";

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

  it("answers what crawlDay says at any instant, forwards, backwards and across DST changes", () => {
    for (const tz of ["Asia/Shanghai", "America/New_York", "Australia/Lord_Howe", "UTC"]) {
      const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
      const cal = new CrawlCalendar(clock, tz);
      let seed = 7;
      for (let i = 0; i < 3000; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        // Mostly small steps (minutes to hours) either way, now and then a jump of weeks.
        const step = i % 50 === 0 ? (seed % 60) * 86400_000 - 30 * 86400_000 : (seed % 7200_000) - 2400_000;
        clock.advance(step);
        expect(cal.today()).toBe(crawlDay(clock.now(), tz));
      }
    }
  });
});

describe("dayStart", () => {
  it("is 00:00 of the day in the time zone", () => {
    expect(dayStart("2026-11-30", "Asia/Shanghai").toISOString()).toBe("2026-11-29T16:00:00.000Z");
    expect(dayStart("2026-11-30", "UTC").toISOString()).toBe("2026-11-30T00:00:00.000Z");
    expect(dayStart("2026-11-30", "Pacific/Kiritimati").toISOString()).toBe("2026-11-29T10:00:00.000Z"); // +14:00
    expect(dayStart("2026-11-30", "Pacific/Pago_Pago").toISOString()).toBe("2026-11-30T11:00:00.000Z"); // -11:00
  });

  it("follows daylight saving time", () => {
    expect(dayStart("2026-07-01", "America/New_York").toISOString()).toBe("2026-07-01T04:00:00.000Z");
    expect(dayStart("2026-12-01", "America/New_York").toISOString()).toBe("2026-12-01T05:00:00.000Z");
  });

  it("is the first instant whose crawl day is that day", () => {
    for (const tz of ["Asia/Shanghai", "Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe"]) {
      const start = dayStart("2026-03-29", tz);
      expect(crawlDay(start, tz)).toBe("2026-03-29");
      expect(crawlDay(new Date(start.getTime() - 1), tz)).toBe("2026-03-28");
    }
  });
});
