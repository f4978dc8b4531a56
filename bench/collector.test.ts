// The collector bench runs and reports both rates and their ratio (asserts the shape, never a speed).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

describe("npm run bench:collector -- --quick", () => {
  it("measures the raw upstream fetch rate and the collector's in one run", async () => {
    const { stdout } = await promisify(execFile)("node_modules/.bin/tsx", ["bench/collector.ts", "--quick"], { cwd: root });
    expect(stdout).toMatch(/\| raw upstream fetch \(HTTP, batch 500\) \| 2000 \| [\d.]+ \| \d+ \|/);
    expect(stdout).toMatch(/\| collector → DATABASE \(sqlite\) \| 2000 \| [\d.]+ \| \d+ \|/);
    expect(stdout).toMatch(/\| collector → DATABASE \(sqlite\) vs raw fetch \| [\d.]+× \|/);
  }, 120_000);
});
