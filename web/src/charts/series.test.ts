import { describe, expect, it } from "vitest";
import { activitySeries, completionSeries } from "./series.ts";

describe("activitySeries", () => {
  it("columns: time in seconds, pages, jobs", () => {
    expect(
      activitySeries([
        { at: "2026-11-29T02:00:00.000Z", pages: 3, jobsFound: 30 },
        { at: "2026-11-29T02:01:00.000Z", pages: 0, jobsFound: 0 },
      ]),
    ).toEqual([[1795917600, 1795917660], [3, 0], [30, 0]]);
  });
});

describe("completionSeries", () => {
  const start = Date.parse("2026-11-28T16:00:00Z");
  it("starts at 0% at the day's start, steps at each point, holds to now", () => {
    const now = Date.parse("2026-11-29T03:00:00Z");
    const d = completionSeries(
      [
        { at: "2026-11-29T02:00:00.000Z", completed: 1 },
        { at: "2026-11-29T02:05:00.000Z", completed: 3 },
      ],
      8,
      start,
      now,
    );
    expect(d).toEqual([
      [start / 1000, 1795917600, 1795917900, now / 1000],
      [0, 12.5, 37.5, 37.5],
    ]);
  });
  it("no keywords: 0%, never a division by zero", () => {
    expect(completionSeries([{ at: "2026-11-29T02:00:00.000Z", completed: 0 }], 0, start, start)[1]).toEqual([0, 0]);
  });
});
