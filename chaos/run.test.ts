// npm run chaos -- --quick runs every scenario and reports (a smoke test: it asserts that the suite
// runs, prints its table and writes its results; the full suite is `npm run chaos`).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

describe("npm run chaos -- --quick", () => {
  it("tries every fault, prints what survived and writes the results", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccp-chaos-test-"));
    try {
      const out = join(dir, "results.json");
      const run = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [join(root, "chaos/main.ts"), "--quick", "--out", out], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).catch(
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      const results = JSON.parse(readFileSync(out, "utf8"));
      const failures = results.scenarios.filter((s: { survivedAll: boolean }) => !s.survivedAll);
      expect(failures, run.stdout).toEqual([]);
      expect("code" in run ? run.code : 0).toBe(0);
      expect(run.stdout).toContain("| scenario | survived | what it tried | what survived |");
      expect(results.quick).toBe(true);
      expect(results.scenarios.map((s: { name: string }) => s.name)).toEqual(["spider-kill", "server-kill", "database", "slow-clients", "fuzz", "query-limits", "bad-tokens"]);
      for (const s of results.scenarios) expect(s.checks).toBeGreaterThan(0);
      expect(run.stdout).toMatch(/7\/7 scenarios survived/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
