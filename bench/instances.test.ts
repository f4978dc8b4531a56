// bench:instances runs and reports (a smoke test: the shape of the results, never a speed).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { postgresUnavailable } from "../server/test/databases.ts";

const root = new URL("..", import.meta.url).pathname;

describe("npm run bench:instances -- --quick", () => {
  it("measures every configuration in one run and writes the results", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccp-bench-instances-"));
    try {
      const out = join(dir, "results.json");
      const { stdout } = await promisify(execFile)(
        join(root, "node_modules/.bin/tsx"),
        [join(root, "bench/instances.ts"), "--quick", "--keywords", "100", "--concurrency", "8", "--out", out],
        { cwd: root },
      );
      expect(stdout).toContain("| ratio | value |");
      const results = JSON.parse(readFileSync(out, "utf8"));
      const expected = (await postgresUnavailable()) ? ["sqlite×1", "sqlite×2"] : ["sqlite×1", "sqlite×2", "postgres×1", "postgres×2"];
      expect(results.rows.map((r: { provider: string; instances: number }) => `${r.provider}×${r.instances}`)).toEqual(expected);
      for (const r of results.rows) expect(r.perSecond).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
