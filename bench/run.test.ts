// The bench runs and reports (a smoke test: it asserts the shape of the results, never a speed).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

describe("npm run bench -- --quick", () => {
  it("measures every section with its baselines in one run and writes the results", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccp-bench-test-"));
    try {
      const out = join(dir, "results.json");
      const { stdout } = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [join(root, "bench/run.ts"), "--quick", "--out", out], {
        cwd: root,
      });
      expect(stdout).toContain("| ratio | value | goal | met |");
      expect(stdout).toContain("load average");
      const results = JSON.parse(readFileSync(out, "utf8"));
      expect(results.quick).toBe(true);
      expect(results.sections).toEqual(["reports", "cycles", "batch", "scale", "stalls", "fanout"]);
      const kinds = new Set(results.rows.map((r: { what: string }) => r.what.split(" (")[0]));
      for (const k of ["no-op mutations/s", "claims/s", "page reports/s", "claim→complete cycles/s", "batched claim→complete keywords/s"]) {
        expect(kinds).toContain(k);
      }
      for (const r of results.rows) expect(r.perSecond).toBeGreaterThan(0);
      for (const p of results.providers) {
        expect(results.scale[p]).toHaveLength(2);
        expect(results.ratios.map((r: { ratio: string }) => r.ratio)).toContain(
          `page reports vs bare Yoga no-op (${p === "sqlite" ? "SQLite" : "PostgreSQL"})`,
        );
      }
      if (results.providers.includes("postgres")) expect(kinds).toContain("pg-boss fetch→complete/s");
      if (!results.bullmqSkipped) expect(kinds).toContain("BullMQ no-op jobs/s");
      expect(results.stalls.map((r: { checkpoints: string }) => r.checkpoints)).toEqual(["commit", "thread"]);
      for (const r of results.stalls) expect(r.reports).toBeGreaterThan(0);
      expect(results.stalls[1].threadCheckpoints).toBeGreaterThan(0);
      expect(stdout).toContain("stalls (SQLite, page reports in-process, C=32)");
      expect(results.fanout).toHaveLength(1);
      expect(results.fanout[0].messagesDelivered).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
