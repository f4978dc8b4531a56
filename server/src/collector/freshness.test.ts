import { describe, expect, it } from "vitest";
import { cutoffDay, isFresh, parseDay } from "./freshness.ts";

describe("freshness", () => {
  it("parses YYYY-MM-DD, YYYYMMDD and a date followed by a time", () => {
    expect(parseDay("2026-11-29")).toBe("2026-11-29");
    expect(parseDay("20261129")).toBe("2026-11-29");
    expect(parseDay(20261129)).toBe("2026-11-29");
    expect(parseDay("2026-11-29 23:59:59")).toBe("2026-11-29");
    expect(parseDay(" 2026-11-29T08:00:00 ")).toBe("2026-11-29");
  });

  it("rejects empty, malformed and impossible dates", () => {
    for (const v of ["", "2026-2-3", "2026/11/29", "29-11-2026", "2026-02-30", "20261301", "2026112", null, undefined, {}]) {
      expect(parseDay(v), String(v)).toBeNull();
    }
  });

  it("the cut-off is filterDays calendar days back, across months and leap days", () => {
    expect(cutoffDay("2026-11-29", 7)).toBe("2026-11-22");
    expect(cutoffDay("2028-03-01", 1)).toBe("2028-02-29");
    expect(cutoffDay("2026-01-05", 10)).toBe("2025-12-26");
    expect(cutoffDay("2026-11-29", 0)).toBe("2026-11-29");
  });

  it("fresh from the cut-off day on; undated records are stale", () => {
    const cutoff = cutoffDay("2026-11-29", 7);
    expect(isFresh("2026-11-22", cutoff)).toBe(true);
    expect(isFresh("2026-11-21", cutoff)).toBe(false);
    expect(isFresh("2026-12-01", cutoff)).toBe(true);
    expect(isFresh(null, cutoff)).toBe(false);
  });
});
