import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors.ts";
import {
  type CrawlEventInput,
  type CrawlEventType,
  CrawlStatus,
  type Decision,
  decide,
  effectiveStatus,
  EVENT_TYPES,
  type KeywordState,
  lastPage,
  MAX_JOBS_PER_PAGE,
  MAX_TOTAL_PAGES,
  STATUSES,
} from "./rules.ts";

const { IDLE, CRAWLING, COMPLETED, FAILED, PARTIAL } = CrawlStatus;
const LOST = ErrorCode.LEASE_LOST;
const INVALID = ErrorCode.INVALID_TRANSITION;
const BAD = ErrorCode.BAD_USER_INPUT;

const NOW = new Date("2026-11-29T04:00:00Z");
const TODAY = "2026-11-29";
const YESTERDAY = "2026-11-28";
const at = { now: NOW, today: TODAY };
const SOURCE = { maxPages: 3, maxRetries: 3, staleAfterSeconds: 1800 };
const HOLDER = "lease-holder";
const FOREIGN = "lease-foreign";
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);

function state(overrides: Partial<KeywordState> = {}): KeywordState {
  return {
    status: CRAWLING,
    crawlDate: TODAY,
    lastCompletedPage: 0,
    totalPages: 0,
    jobsFound: 0,
    pagesCrawled: 0,
    retryCount: 0,
    leaseToken: HOLDER,
    heartbeatAt: secondsAgo(60),
    crawlerId: "spider-1",
    errorMessage: "",
    ...overrides,
  };
}

type ProgressEvent = Extract<CrawlEventInput, { type: "PROGRESS" }>;
const progress = (p: Partial<ProgressEvent> = {}): ProgressEvent => ({
  type: "PROGRESS", leaseToken: HOLDER, page: 2, totalPages: null, jobsOnPage: 10, previousJobsOnPage: null, ...at, ...p,
});

/** One event of each type; lease-taking events present `token`. */
function event(type: CrawlEventType, token = HOLDER): CrawlEventInput {
  switch (type) {
    case "CLAIM": return { type, crawlerId: "spider-2", leaseToken: "lease-new", ...at };
    case "PROGRESS": return progress({ leaseToken: token });
    case "FAIL": return { type, leaseToken: token, errorMessage: "banned", ...at };
    case "HEARTBEAT": case "COMPLETE": case "RELEASE": return { type, leaseToken: token, ...at };
    case "STALE": case "ROLLOVER": case "RESET": case "FORCE_RELEASE": case "RETRY": return { type, ...at };
  }
}

/** Apply an accepted decision's patch, as store.ts does. */
function apply(s: KeywordState, d: Decision): KeywordState {
  if (!d.ok) throw new Error(`refused: ${d.code} ${d.message}`);
  return { ...s, ...d.patch };
}

const outcome = (d: Decision): Outcome => (d.ok ? d.to : d.code);
const refusal = (d: Decision) => (d.ok ? `accepted → ${d.to}` : d.code);

// ─── The transition table ────────────────────────────────────────────────────────────────────────
// A cell is the target status (accepted) or the error code (refused).
type Outcome = CrawlStatus | ErrorCode;
type Table<E extends string> = Record<CrawlStatus, Record<E, Outcome>>;

/**
 * State stored for TODAY; lease-taking events present the holder's token (the keyword's leaseToken).
 * The fixture's heartbeat is 31 minutes old, so the STALE column shows the sweep.
 */
// prettier-ignore
const EXPECTED: Table<CrawlEventType> = {
  IDLE:      { CLAIM: CRAWLING, PROGRESS: LOST,     HEARTBEAT: LOST,     COMPLETE: LOST,      FAIL: LOST,    RELEASE: LOST,    STALE: INVALID, ROLLOVER: INVALID, RESET: IDLE, FORCE_RELEASE: INVALID, RETRY: INVALID },
  CRAWLING:  { CLAIM: INVALID,  PROGRESS: CRAWLING, HEARTBEAT: CRAWLING, COMPLETE: COMPLETED, FAIL: FAILED,  RELEASE: PARTIAL, STALE: PARTIAL, ROLLOVER: INVALID, RESET: IDLE, FORCE_RELEASE: PARTIAL, RETRY: INVALID },
  COMPLETED: { CLAIM: INVALID,  PROGRESS: INVALID,  HEARTBEAT: INVALID,  COMPLETE: COMPLETED, FAIL: INVALID, RELEASE: INVALID, STALE: INVALID, ROLLOVER: INVALID, RESET: IDLE, FORCE_RELEASE: INVALID, RETRY: INVALID },
  FAILED:    { CLAIM: CRAWLING, PROGRESS: INVALID,  HEARTBEAT: INVALID,  COMPLETE: INVALID,   FAIL: FAILED,  RELEASE: INVALID, STALE: INVALID, ROLLOVER: INVALID, RESET: IDLE, FORCE_RELEASE: INVALID, RETRY: PARTIAL },
  PARTIAL:   { CLAIM: CRAWLING, PROGRESS: LOST,     HEARTBEAT: LOST,     COMPLETE: LOST,      FAIL: LOST,    RELEASE: PARTIAL, STALE: INVALID, ROLLOVER: INVALID, RESET: IDLE, FORCE_RELEASE: INVALID, RETRY: INVALID },
};

/** The same lease-taking events, today, presenting a token that is NOT the keyword's lease. */
const LEASE_EVENTS = ["PROGRESS", "HEARTBEAT", "COMPLETE", "FAIL", "RELEASE"] as const;
// prettier-ignore
const EXPECTED_FOREIGN: Table<(typeof LEASE_EVENTS)[number]> = {
  IDLE:      { PROGRESS: INVALID, HEARTBEAT: INVALID, COMPLETE: INVALID, FAIL: INVALID, RELEASE: INVALID },
  CRAWLING:  { PROGRESS: LOST,    HEARTBEAT: LOST,    COMPLETE: LOST,    FAIL: LOST,    RELEASE: LOST },
  COMPLETED: { PROGRESS: INVALID, HEARTBEAT: INVALID, COMPLETE: INVALID, FAIL: INVALID, RELEASE: INVALID },
  FAILED:    { PROGRESS: INVALID, HEARTBEAT: INVALID, COMPLETE: INVALID, FAIL: INVALID, RELEASE: INVALID },
  PARTIAL:   { PROGRESS: INVALID, HEARTBEAT: INVALID, COMPLETE: INVALID, FAIL: INVALID, RELEASE: INVALID },
};

/** State stored for YESTERDAY reads as IDLE: the IDLE row, except that ROLLOVER materialises it. */
const expectedYesterday = (stored: CrawlStatus, type: CrawlEventType): Outcome =>
  type === "ROLLOVER" ? (stored === IDLE ? INVALID : IDLE) : EXPECTED.IDLE[type];

const fixture = (status: CrawlStatus, crawlDate: string) =>
  state({ status, crawlDate, lastCompletedPage: 1, jobsFound: 10, pagesCrawled: 1, heartbeatAt: secondsAgo(31 * 60) });

function expectCell(d: Decision, expected: Outcome, from: CrawlStatus) {
  expect(outcome(d)).toBe(expected);
  if (!d.ok) return expect(d.message).not.toBe("");
  expect(d.from).toBe(from);
  // A replay writes nothing; every other accepted decision writes its target status.
  if (d.reason === "replay") expect([d.from, d.patch]).toEqual([d.to, {}]);
  else expect(d.patch.status).toBe(d.to);
}

describe("transition table", () => {
  it("has a cell for every status × event type", () => {
    const cells = (t: Table<string>) => Object.values(t).flatMap((row) => Object.keys(row));
    expect(Object.keys(EXPECTED).sort()).toEqual([...STATUSES].sort());
    expect(Object.keys(EXPECTED_FOREIGN).sort()).toEqual([...STATUSES].sort());
    for (const row of Object.values(EXPECTED)) expect(Object.keys(row).sort()).toEqual([...EVENT_TYPES].sort());
    expect(cells(EXPECTED)).toHaveLength(STATUSES.length * EVENT_TYPES.length);
    expect(cells(EXPECTED_FOREIGN)).toHaveLength(STATUSES.length * LEASE_EVENTS.length);
    expect(EVENT_TYPES).toEqual(expect.arrayContaining([...LEASE_EVENTS]));
  });

  describe.each(STATUSES)("%s today, holder's token", (status) => {
    it.each(EVENT_TYPES)("%s", (type) => {
      expectCell(decide(fixture(status, TODAY), SOURCE, event(type, HOLDER)), EXPECTED[status][type], status);
    });
  });

  describe.each(STATUSES)("%s today, foreign token", (status) => {
    it.each(LEASE_EVENTS)("%s", (type) => {
      expectCell(decide(fixture(status, TODAY), SOURCE, event(type, FOREIGN)), EXPECTED_FOREIGN[status][type], status);
    });
  });

  describe.each(STATUSES)("%s stored yesterday (reads as IDLE), holder's token", (stored) => {
    it.each(EVENT_TYPES)("%s", (type) => {
      const d = decide(fixture(stored, YESTERDAY), SOURCE, event(type, HOLDER));
      expectCell(d, expectedYesterday(stored, type), type === "ROLLOVER" ? stored : IDLE);
    });
  });
});

// ─── CLAIM ───────────────────────────────────────────────────────────────────────────────────────
describe("CLAIM", () => {
  const claim = (s: KeywordState, leaseToken = "lease-new") =>
    decide(s, SOURCE, { type: "CLAIM", crawlerId: "spider-2", leaseToken, ...at });

  it("fresh (IDLE): starts at page 1 with the day's counters reset", () => {
    const old = state({ status: FAILED, crawlDate: YESTERDAY, lastCompletedPage: 2, totalPages: 7, jobsFound: 40,
      pagesCrawled: 2, retryCount: 3, errorMessage: "banned" });
    const d = claim(old);
    expect(d).toMatchObject({ ok: true, from: IDLE, to: CRAWLING, reason: "claim", startPage: 1, resumed: false });
    expect(d.ok && d.patch).toMatchObject({
      status: CRAWLING, crawlDate: TODAY, leaseToken: "lease-new", crawlerId: "spider-2",
      lastCompletedPage: 0, totalPages: 0, jobsFound: 0, pagesCrawled: 0, retryCount: 0, errorMessage: "",
      heartbeatAt: NOW, crawlStartedAt: NOW, lastRequestedAt: NOW,
    });
  });

  it("of PARTIAL with lastCompletedPage 2: resumes at page 3, counters kept", () => {
    const s = state({ status: PARTIAL, lastCompletedPage: 2, totalPages: 5, jobsFound: 20, pagesCrawled: 2, retryCount: 1 });
    const d = claim(s);
    expect(d).toMatchObject({ ok: true, from: PARTIAL, to: CRAWLING, reason: "resume", startPage: 3, resumed: true });
    expect(d.ok && d.patch).toMatchObject({ status: CRAWLING, leaseToken: "lease-new", crawlerId: "spider-2" });
    const after = apply(s, d);
    expect(after).toMatchObject({ crawlDate: TODAY, lastCompletedPage: 2, totalPages: 5, jobsFound: 20, pagesCrawled: 2, retryCount: 1 });
  });

  it("of PARTIAL with lastCompletedPage 0: starts at page 1, not resumed", () => {
    expect(claim(state({ status: PARTIAL, lastCompletedPage: 0 }))).toMatchObject({ ok: true, startPage: 1, resumed: false });
  });

  it("of FAILED with retries left: retryCount + 1, reason retry, starts at lastCompletedPage + 1", () => {
    const s = state({ status: FAILED, retryCount: 2, lastCompletedPage: 1, jobsFound: 10, errorMessage: "banned" });
    const d = claim(s);
    expect(d).toMatchObject({ ok: true, from: FAILED, to: CRAWLING, reason: "retry", startPage: 2, resumed: true });
    expect(apply(s, d)).toMatchObject({ status: CRAWLING, retryCount: 3, lastCompletedPage: 1, jobsFound: 10 });
  });

  it("of FAILED with retryCount === maxRetries: INVALID_TRANSITION", () => {
    expect(refusal(claim(state({ status: FAILED, retryCount: SOURCE.maxRetries })))).toBe(INVALID);
  });

  it("of PARTIAL whose pages are all done (maxPages lowered since): COMPLETED at once, no lease", () => {
    const kw = state({ status: PARTIAL, lastCompletedPage: 3, totalPages: 0 });
    const d = decide(kw, { ...SOURCE, maxPages: 2 }, event("CLAIM"));
    expect(d).toMatchObject({ ok: true, from: PARTIAL, to: COMPLETED, reason: "no pages left" });
    expect(d.ok && d.startPage).toBeFalsy();
  });

  it("with maxRetries 3, a keyword can be claimed after failing 3 times, and no more after the 4th", () => {
    let s = state({ status: IDLE, crawlDate: null, leaseToken: null, heartbeatAt: null });
    let n = 0;
    s = apply(s, claim(s, `lease-${++n}`));
    const claimsAfterFailure: string[] = [];
    for (let failures = 1; failures <= 4; failures++) {
      s = apply(s, decide(s, SOURCE, { type: "FAIL", leaseToken: s.leaseToken ?? "", errorMessage: `#${failures}`, ...at }));
      expect(s.status).toBe(FAILED);
      const d = claim(s, `lease-${++n}`);
      claimsAfterFailure.push(d.ok ? `${d.reason} ${d.patch.retryCount}` : d.code);
      if (d.ok) s = apply(s, d);
    }
    expect(claimsAfterFailure).toEqual(["retry 1", "retry 2", "retry 3", INVALID]);
  });
});

// ─── PROGRESS ────────────────────────────────────────────────────────────────────────────────────
describe("PROGRESS", () => {
  const crawling = state({ lastCompletedPage: 1, totalPages: 0, jobsFound: 10, pagesCrawled: 1 });

  it.each([
    ["page 0", { page: 0 }],
    ["page -1", { page: -1 }],
    ["non-integer page", { page: 1.5 }],
    ["page > maxPages", { page: SOURCE.maxPages + 1 }],
    ["negative totalPages", { totalPages: -1 }],
    ["totalPages > MAX_TOTAL_PAGES", { totalPages: MAX_TOTAL_PAGES + 1 }],
    ["page > reported totalPages", { page: 3, totalPages: 2 }],
    ["negative jobsFound", { jobsOnPage: -1 }],
    ["jobsFound > MAX_JOBS_PER_PAGE", { jobsOnPage: MAX_JOBS_PER_PAGE + 1 }],
  ])("refuses %s with BAD_USER_INPUT", (_name, p) => {
    expect(refusal(decide(crawling, SOURCE, progress(p)))).toBe(BAD);
  });

  it("accepts the limits: totalPages MAX_TOTAL_PAGES, jobsFound 0 and MAX_JOBS_PER_PAGE", () => {
    for (const p of [{ totalPages: MAX_TOTAL_PAGES }, { jobsOnPage: 0 }, { jobsOnPage: MAX_JOBS_PER_PAGE }]) {
      expect(outcome(decide(crawling, SOURCE, progress(p)))).toBe(CRAWLING);
    }
  });

  it("records a new page: counters, heartbeat and page report", () => {
    const d = decide(crawling, SOURCE, progress({ page: 2, totalPages: 5, jobsOnPage: 12 }));
    expect(d).toMatchObject({ ok: true, to: CRAWLING, reason: "progress", pageReport: { page: 2, jobsFound: 12 } });
    expect(d.ok && d.patch).toEqual({
      status: CRAWLING, lastCompletedPage: 2, totalPages: 5, jobsFound: 22, pagesCrawled: 2, heartbeatAt: NOW,
    });
  });

  it("counts a page reported twice once (jobsFound = old - previous + new, pagesCrawled unchanged)", () => {
    let s = apply(crawling, decide(crawling, SOURCE, progress({ page: 2, jobsOnPage: 12 })));
    expect(s).toMatchObject({ jobsFound: 22, pagesCrawled: 2 });
    s = apply(s, decide(s, SOURCE, progress({ page: 2, jobsOnPage: 15, previousJobsOnPage: 12 })));
    expect(s).toMatchObject({ jobsFound: 25, pagesCrawled: 2, lastCompletedPage: 2 });
  });

  it("completes on the last page: maxPages while totalPages is unknown", () => {
    for (const totalPages of [null, 0, undefined]) {
      const d = decide(state({ lastCompletedPage: 2 }), SOURCE, progress({ page: 3, totalPages }));
      expect(d).toMatchObject({ ok: true, to: COMPLETED, reason: "last page", pageReport: { page: 3 } });
    }
  });

  it("completes on the last page: min(totalPages, maxPages)", () => {
    expect(decide(crawling, SOURCE, progress({ page: 2, totalPages: 2 }))).toMatchObject({ to: COMPLETED, reason: "last page" });
    expect(decide(crawling, SOURCE, progress({ page: 2, totalPages: 10 }))).toMatchObject({ to: CRAWLING });
    expect(decide(state({ lastCompletedPage: 2 }), SOURCE, progress({ page: 3, totalPages: 10 }))).toMatchObject({ to: COMPLETED });
    // totalPages known from an earlier report
    expect(decide(state({ totalPages: 2 }), SOURCE, progress({ page: 2, totalPages: null }))).toMatchObject({ to: COMPLETED });
  });

  it("totalPages 0, null or absent keeps a known totalPages", () => {
    const s = state({ lastCompletedPage: 1, totalPages: 7 });
    for (const totalPages of [0, null, undefined]) {
      const d = decide(s, SOURCE, progress({ page: 2, totalPages }));
      expect(d.ok && d.patch.totalPages).toBe(7);
    }
  });

  it("lastCompletedPage never decreases: an earlier page keeps the max", () => {
    const s = state({ lastCompletedPage: 2, jobsFound: 25, pagesCrawled: 2 });
    const d = decide(s, SOURCE, progress({ page: 1, jobsOnPage: 11, previousJobsOnPage: 10 }));
    expect(apply(s, d)).toMatchObject({ status: CRAWLING, lastCompletedPage: 2, jobsFound: 26, pagesCrawled: 2 });
  });
});

// ─── Idempotent replays ──────────────────────────────────────────────────────────────────────────
describe("idempotent replays", () => {
  const replay = { ok: true, patch: {}, reason: "replay" };

  it("COMPLETE on COMPLETED with the holder's token: ok, empty patch", () => {
    expect(decide(state({ status: COMPLETED }), SOURCE, event("COMPLETE"))).toMatchObject({ ...replay, from: COMPLETED, to: COMPLETED });
  });

  it("FAIL on FAILED with the holder's token: ok, empty patch", () => {
    expect(decide(state({ status: FAILED }), SOURCE, event("FAIL"))).toMatchObject({ ...replay, from: FAILED, to: FAILED });
  });

  it("RELEASE on PARTIAL with the holder's token: ok, empty patch", () => {
    expect(decide(state({ status: PARTIAL }), SOURCE, event("RELEASE"))).toMatchObject({ ...replay, from: PARTIAL, to: PARTIAL });
  });

  it("PROGRESS of the recorded last page (same jobs) on COMPLETED: ok, empty patch, no page report", () => {
    const s = state({ status: COMPLETED, lastCompletedPage: 3, jobsFound: 30, pagesCrawled: 3 });
    const d = decide(s, SOURCE, progress({ page: 3, jobsOnPage: 10, previousJobsOnPage: 10 }));
    expect(d).toMatchObject({ ...replay, from: COMPLETED, to: COMPLETED });
    expect(d.ok && d.pageReport).toBeUndefined();
  });

  it("non-replays are refused: foreign token, or a different jobsFound for the page", () => {
    expect(refusal(decide(state({ status: COMPLETED }), SOURCE, event("COMPLETE", FOREIGN)))).toBe(INVALID);
    expect(refusal(decide(state({ status: FAILED }), SOURCE, event("FAIL", FOREIGN)))).toBe(INVALID);
    expect(refusal(decide(state({ status: PARTIAL }), SOURCE, event("RELEASE", FOREIGN)))).toBe(INVALID);
    const done = state({ status: COMPLETED, lastCompletedPage: 3 });
    expect(refusal(decide(done, SOURCE, progress({ page: 3, leaseToken: FOREIGN, previousJobsOnPage: 10 })))).toBe(INVALID);
    expect(refusal(decide(done, SOURCE, progress({ page: 3, jobsOnPage: 11, previousJobsOnPage: 10 })))).toBe(INVALID);
  });
});

// ─── Lease errors ────────────────────────────────────────────────────────────────────────────────
describe("lease errors", () => {
  it("CRAWLING under another crawler's lease + my token → LEASE_LOST", () => {
    expect(refusal(decide(state({ leaseToken: "lease-B" }), SOURCE, progress({ leaseToken: "lease-A" })))).toBe(LOST);
  });

  it("PARTIAL (swept or released) + the holder's token → LEASE_LOST", () => {
    expect(refusal(decide(state({ status: PARTIAL }), SOURCE, event("HEARTBEAT")))).toBe(LOST);
  });

  it("state from yesterday + the holder's token → LEASE_LOST", () => {
    expect(refusal(decide(state({ crawlDate: YESTERDAY }), SOURCE, progress()))).toBe(LOST);
  });

  it("IDLE never claimed (leaseToken null) + any token → INVALID_TRANSITION", () => {
    const never = state({ status: IDLE, crawlDate: null, leaseToken: null, heartbeatAt: null });
    for (const type of LEASE_EVENTS) {
      for (const token of [HOLDER, FOREIGN, ""]) expect(refusal(decide(never, SOURCE, event(type, token)))).toBe(INVALID);
    }
  });
});

// ─── STALE, ROLLOVER, RESET ──────────────────────────────────────────────────────────────────────
describe("STALE", () => {
  const stale = (s: KeywordState) => decide(s, SOURCE, event("STALE"));

  it("CRAWLING with a heartbeat older than staleAfterSeconds → PARTIAL", () => {
    expect(stale(state({ heartbeatAt: secondsAgo(1801) }))).toMatchObject({ ok: true, from: CRAWLING, to: PARTIAL, reason: "stale" });
    expect(stale(state({ heartbeatAt: null }))).toMatchObject({ ok: true, to: PARTIAL });
  });

  it("CRAWLING with a recent heartbeat (even exactly staleAfterSeconds) → INVALID_TRANSITION", () => {
    expect(refusal(stale(state({ heartbeatAt: secondsAgo(60) })))).toBe(INVALID);
    expect(refusal(stale(state({ heartbeatAt: secondsAgo(1800) })))).toBe(INVALID);
  });

  it("a healthy long crawl (started hours ago, recent heartbeat) is not stale", () => {
    const longCrawl = { ...state({ heartbeatAt: secondsAgo(30) }), crawlStartedAt: secondsAgo(5 * 3600) };
    expect(refusal(stale(longCrawl))).toBe(INVALID);
  });

  // Regression: STALE once returned an empty patch (the replay convention), so store.apply() wrote
  // nothing and the stale sweep never moved the row to PARTIAL.
  it("STALE writes the PARTIAL status (its patch is not empty)", () => {
    expect(stale(state({ heartbeatAt: secondsAgo(3600) }))).toMatchObject({ ok: true, patch: { status: PARTIAL } });
  });
});

describe("ROLLOVER", () => {
  const rollover = (s: KeywordState) => decide(s, SOURCE, event("ROLLOVER"));

  it.each(STATUSES.filter((s) => s !== IDLE))("%s from yesterday → IDLE (from = the stored status)", (stored) => {
    const d = rollover(state({ status: stored, crawlDate: YESTERDAY }));
    expect(d).toMatchObject({ ok: true, from: stored, to: IDLE, reason: "rollover", patch: { status: IDLE } });
    expect(rollover(state({ status: stored, crawlDate: null }))).toMatchObject({ ok: true, to: IDLE });
  });

  it.each(STATUSES)("%s stored today is refused", (stored) => {
    expect(refusal(rollover(state({ status: stored, crawlDate: TODAY })))).toBe(INVALID);
  });

  it("IDLE from yesterday is refused (nothing to materialise)", () => {
    expect(refusal(rollover(state({ status: IDLE, crawlDate: YESTERDAY })))).toBe(INVALID);
  });
});

describe("RESET", () => {
  it.each(STATUSES)("%s → IDLE with crawlDate null and counters zeroed", (status) => {
    const s = state({ status, lastCompletedPage: 2, totalPages: 9, jobsFound: 33, pagesCrawled: 2, retryCount: 2, errorMessage: "x" });
    const d = decide(s, SOURCE, event("RESET"));
    expect(d).toMatchObject({ ok: true, from: status, to: IDLE, reason: "reset" });
    expect(apply(s, d)).toMatchObject({
      status: IDLE, crawlDate: null, lastCompletedPage: 0, totalPages: 0, jobsFound: 0, pagesCrawled: 0,
      retryCount: 0, errorMessage: "", heartbeatAt: null, crawlerId: "",
    });
  });
});

describe("operator actions", () => {
  it("FORCE_RELEASE: CRAWLING → PARTIAL, lease token kept so the crawler's late report is LEASE_LOST", () => {
    const s = state({ lastCompletedPage: 2, jobsFound: 20 });
    const d = decide(s, SOURCE, event("FORCE_RELEASE"));
    expect(d).toMatchObject({ ok: true, from: CRAWLING, to: PARTIAL, reason: "released by operator" });
    const after = apply(s, d);
    expect(after).toMatchObject({ status: PARTIAL, leaseToken: HOLDER, lastCompletedPage: 2, jobsFound: 20 });
    expect(refusal(decide(after, SOURCE, progress({ page: 3 })))).toBe(LOST);
    const claim = decide(after, SOURCE, event("CLAIM"));
    expect(claim).toMatchObject({ ok: true, to: CRAWLING, startPage: 3, resumed: true, reason: "resume" });
  });

  it("RETRY: FAILED (retries used up) → PARTIAL, error cleared, retryCount kept; the next claim resumes it", () => {
    const s = state({ status: FAILED, retryCount: 3, lastCompletedPage: 1, errorMessage: "banned" });
    expect(refusal(decide(s, SOURCE, event("CLAIM")))).toBe(INVALID);
    const d = decide(s, SOURCE, event("RETRY"));
    expect(d).toMatchObject({ ok: true, from: FAILED, to: PARTIAL, reason: "retried by operator" });
    const after = apply(s, d);
    expect(after).toMatchObject({ status: PARTIAL, errorMessage: "", retryCount: 3, lastCompletedPage: 1 });
    expect(decide(after, SOURCE, event("CLAIM"))).toMatchObject({ ok: true, to: CRAWLING, startPage: 2 });
  });

  it("a FAILED keyword from yesterday reads as IDLE: RETRY is refused", () => {
    expect(refusal(decide(state({ status: FAILED, crawlDate: YESTERDAY }), SOURCE, event("RETRY")))).toBe(INVALID);
  });
});

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────────
describe("helpers", () => {
  it("effectiveStatus: the stored status today, IDLE for any other crawl day", () => {
    for (const status of STATUSES) {
      expect(effectiveStatus({ status, crawlDate: TODAY }, TODAY)).toBe(status);
      expect(effectiveStatus({ status, crawlDate: YESTERDAY }, TODAY)).toBe(IDLE);
      expect(effectiveStatus({ status, crawlDate: null }, TODAY)).toBe(IDLE);
    }
  });

  it("lastPage: min(totalPages, maxPages), or maxPages while totalPages is unknown (0)", () => {
    expect(lastPage(0, 3)).toBe(3);
    expect(lastPage(2, 3)).toBe(2);
    expect(lastPage(3, 3)).toBe(3);
    expect(lastPage(50, 3)).toBe(3);
    expect(lastPage(1, 50)).toBe(1);
  });
});
