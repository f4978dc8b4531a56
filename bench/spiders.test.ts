// npm run bench:spiders runs and reports (a smoke test: it checks the report's shape, never a speed).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

describe("npm run bench:spiders -- --quick", () => {
  it("crawls with a fleet, measures the floors and the crash rounds, and prints the table", async () => {
    const { stdout } = await promisify(execFile)(
      join(root, "node_modules/.bin/tsx"),
      [join(root, "bench/spiders.ts"), "--quick", "--keywords", "3", "--crash-rounds", "1"],
      { cwd: root },
    );
    const row = (name: string) => new RegExp(`\\| ${name.replace(/[()/+]/g, "\\$&")}[^|]*\\| ([^|]+) \\|`).exec(stdout)?.[1]?.trim();
    expect(row("keywords (3 sites)")).toBe("9");
    expect(Number(row("end to end, pages/s (first to last site request)"))).toBeGreaterThan(0);
    expect(Number(row("site-side floor, pages/s (fetch + parse only, no server)"))).toBeGreaterThan(0);
    expect(row("crash rounds exact (completed, every page, none lost)")).toBe("1/1");
    expect(Number(row("pages re-fetched over all crash rounds")?.split(" ")[0])).toBeLessThanOrEqual(1);
  });
});
