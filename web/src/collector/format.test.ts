import { describe, expect, it } from "vitest";
import { coverage, EMPTY_DRAFT, lagText, mergeRuns, taskInput } from "./format.ts";

const lag = (o: Partial<Parameters<typeof lagText>[0] & object> = {}) => ({
  head: null,
  behindHead: null,
  sinkMessages: null,
  sinkPending: null,
  error: null,
  ...o,
});

describe("coverage", () => {
  it("is the covered offsets out of the total, 100% only when all are covered", () => {
    expect(coverage({ coveredCount: 0, total: 0 })).toEqual({ done: 0, of: 0, percent: 0 });
    expect(coverage({ coveredCount: 250, total: 1000 })).toEqual({ done: 250, of: 1000, percent: 25 });
    expect(coverage({ coveredCount: 9999, total: 10000 }).percent).toBe(99);
    expect(coverage({ coveredCount: 10000, total: 10000 }).percent).toBe(100);
    // A stale total below the coverage never shows more than 100%.
    expect(coverage({ coveredCount: 120, total: 100 })).toEqual({ done: 100, of: 100, percent: 100 });
  });
});

describe("lagText", () => {
  it("says how far behind the upstream head the task is", () => {
    expect(lagText(null, "DATABASE")).toEqual({ head: "…", sink: "…" });
    expect(lagText(lag({ head: 10010, behindHead: 10 }), "DATABASE").head).toBe("10 behind head 10,010");
    expect(lagText(lag({ head: 500, behindHead: 0 }), "DATABASE").head).toBe("up to date (head 500)");
    expect(lagText(lag({ error: "upstream down" }), "DATABASE").head).toBe("unknown");
  });

  it("gives the JetStream consumers' pending records when there are consumers, else what the sink holds", () => {
    expect(lagText(lag({ sinkMessages: 1200, sinkPending: 40 }), "NATS").sink).toBe("40 pending for consumers of 1,200");
    expect(lagText(lag({ sinkMessages: 1200 }), "NATS").sink).toBe("1,200 in stream, no consumers");
    expect(lagText(lag({ sinkMessages: 1200 }), "DATABASE").sink).toBe("1,200 stored");
    expect(lagText(lag({ error: "nats down" }), "NATS").sink).toBe("unknown");
  });
});

describe("mergeRuns", () => {
  const run = (id: string, batches: number) => ({ id, batches });

  it("puts the live copy of the run going on in place of the list's, or first when the list has not read it yet", () => {
    const list = [run("3", 2), run("2", 9)];
    expect(mergeRuns(list, null)).toBe(list);
    expect(mergeRuns(list, run("3", 5))).toEqual([run("3", 5), run("2", 9)]);
    expect(mergeRuns(list, run("4", 1))).toEqual([run("4", 1), run("3", 2), run("2", 9)]);
    expect(mergeRuns([], run("1", 1))).toEqual([run("1", 1)]);
    // An older run than the list knows (the list was re-read in between) changes nothing.
    expect(mergeRuns(list, run("1", 7))).toEqual(list);
  });
});

describe("taskInput", () => {
  const draft = { ...EMPTY_DRAFT, name: " feed ", url: " http://127.0.0.1:4100/upstream " };

  it("turns the form's text into the mutation's input, without an empty schedule", () => {
    expect(taskInput(draft)).toEqual({
      input: { name: "feed", url: "http://127.0.0.1:4100/upstream", batchSize: 100, filterDays: 7, maxExpiredBatches: 3, sink: "DATABASE" },
    });
    expect(taskInput({ ...draft, schedule: " */5 * * * * ", sink: "NATS", batchSize: "250" }).input).toMatchObject({
      schedule: "*/5 * * * *",
      sink: "NATS",
      batchSize: 250,
    });
  });

  it("names what is wrong instead", () => {
    expect(taskInput({ ...draft, name: "  " }).error).toBe("a name is needed");
    expect(taskInput({ ...draft, url: "ftp://x" }).error).toMatch(/url/);
    expect(taskInput({ ...draft, batchSize: "0" }).error).toBe("batchSize must be a whole number 1–1000");
    expect(taskInput({ ...draft, batchSize: "1.5" }).error).toMatch(/batchSize/);
    expect(taskInput({ ...draft, filterDays: "" }).error).toBe("filterDays must be a whole number 0–3650");
    expect(taskInput({ ...draft, maxExpiredBatches: "1001" }).error).toMatch(/maxExpiredBatches/);
    expect(taskInput({ ...draft, maxExpiredBatches: "0" }).input?.maxExpiredBatches).toBe(0);
  });
});
