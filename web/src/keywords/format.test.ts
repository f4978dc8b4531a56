import { describe, expect, it } from "vitest";
import { age, pageProgress, splitList } from "./format.ts";

describe("pageProgress", () => {
  const src = { id: "qcwy", maxPages: 50 };
  it("uses maxPages while totalPages is unknown", () => {
    expect(pageProgress({ lastCompletedPage: 5, totalPages: 0, source: src })).toEqual({ done: 5, of: 50, percent: 10 });
  });
  it("uses min(totalPages, maxPages) once known", () => {
    expect(pageProgress({ lastCompletedPage: 3, totalPages: 4, source: src })).toEqual({ done: 3, of: 4, percent: 75 });
    expect(pageProgress({ lastCompletedPage: 50, totalPages: 80, source: src })).toEqual({ done: 50, of: 50, percent: 100 });
  });
  it("never shows more than 100% (maxPages lowered after the pages were crawled)", () => {
    expect(pageProgress({ lastCompletedPage: 9, totalPages: 0, source: { id: "boss", maxPages: 3 } })).toEqual({ done: 3, of: 3, percent: 100 });
  });
});

describe("age", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const ago = (s: number) => new Date(now - s * 1000).toISOString();
  it.each([
    [null, "—"],
    [ago(0), "0s"],
    [ago(59), "59s"],
    [ago(65), "1m 05s"],
    [ago(3 * 3600 + 120), "3h 02m"],
    [ago(49 * 3600), "2d 1h"],
  ])("%s → %s", (since, text) => expect(age(since, now)).toBe(text));
  it("a clock slightly behind the server's reads 0s, not negative", () => expect(age(ago(-3), now)).toBe("0s"));
});

describe("splitList", () => {
  it("splits lines, commas and Chinese separators, trims, drops blanks and repeats", () => {
    expect(splitList("北京, 上海\n 广州、深圳，北京\n\n成都;")).toEqual(["北京", "上海", "广州", "深圳", "成都"]);
  });
});
