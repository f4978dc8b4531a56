// The bench runs and reports (a smoke test: it asserts the shape of the results, never a speed).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

describe("npm run bench -- --quick", () => {
  it("measures the stack and its baselines in one run and writes the results", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccp-bench-test-"));
    try {
      const out = join(dir, "results.json");
      const { stdout } = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [join(root, "bench/run.ts"), "--quick", "--out", out], {
        cwd: root,
      });
      expect(stdout).toContain("| ratio | value |");
      const results = JSON.parse(readFileSync(out, "utf8"));
      expect(results.quick).toBe(true);
      expect(results.rows.map((r: { what: string }) => r.what.split(" (")[0])).toEqual([
        "no-op mutations/s",
        "claims/s",
        "page reports/s",
        "claims/s",
        "page reports/s",
      ]);
      for (const r of results.rows) expect(r.perSecond).toBeGreaterThan(0);
      expect(Object.keys(results.ratios)).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
