// The spider CLI refuses bad settings and arguments up front, naming what is wrong.
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseSpiderConfig, siteBaseUrl } from "../src/config.ts";
import { TSX_LOADER } from "./spider-process.ts";

const root = new URL("../..", import.meta.url).pathname;
const run = (args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ["--import", TSX_LOADER, join(root, "spiders/src/cli.ts"), ...args], {
    // Not the repository: a developer's .env there must not change what these runs see.
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? "", ...env },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe("spider settings and CLI", () => {
  it("parses defaults and per-site base URLs", () => {
    const c = parseSpiderConfig({ CRAWL_TOKEN: "t", SITE_BASE_URL: "http://sim:4100/", QCWY_BASE_URL: "https://we.example.invalid" });
    expect(c).toMatchObject({ CRAWL_API_URL: "http://127.0.0.1:4000/graphql", SPIDER_CONCURRENCY: 2, SITE_RETRIES: 5, SERVER_RETRY_MS: 180_000 });
    expect(siteBaseUrl(c, "boss")).toBe("http://sim:4100/boss");
    expect(siteBaseUrl(c, "qcwy")).toBe("https://we.example.invalid");
  });

  it("names every bad variable", () => {
    expect(() => parseSpiderConfig({ SPIDER_CONCURRENCY: "0", SITE_BASE_URL: "nope" })).toThrow(
      /Invalid configuration:[\s\S]*CRAWL_TOKEN=""[\s\S]*SITE_BASE_URL="nope": must be an http\(s\) URL[\s\S]*SPIDER_CONCURRENCY="0"/,
    );
  });

  it("exits 2 on a missing token, 1 on an unknown site or a bad --concurrency", async () => {
    const noToken = await run(["boss", "--once"], {});
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('CRAWL_TOKEN="": is required');
    const badSite = await run(["lagou"], { CRAWL_TOKEN: "x" });
    expect(badSite.code).toBe(1);
    expect(badSite.stderr).toContain("must be one of boss, qcwy, zhilian");
    const badN = await run(["boss", "--concurrency", "0"], { CRAWL_TOKEN: "x" });
    expect(badN.code).toBe(1);
    expect(badN.stderr).toContain("--concurrency");
  });
});
