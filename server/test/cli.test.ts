// The operators' CLIs, run as a user runs them (npm run token / keywords), on the same database.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../src/db/client.ts";
import { hashToken } from "../src/auth/tokens.ts";

const run = promisify(execFile);
const root = new URL("../..", import.meta.url).pathname;
const tsx = join(root, "node_modules/.bin/tsx");

describe("operators' CLIs", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let db: Database;
  const cli = (script: string, ...args: string[]) =>
    run(tsx, [join(root, "server/src/cli", script), ...args], { env, cwd: dir }).then((r) => ({ ...r, code: 0 }), (e) => e as { stdout: string; stderr: string; code: number });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "ccp-cli-"));
    env = { ...process.env, DATABASE_URL: `file:${join(dir, "crawl.db")}`, LOG_LEVEL: "silent" };
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("token create prints the token alone on the last line, stored hashed", async () => {
    const r = await cli("token.ts", "create", "--role", "spider", "--name", "boss-01");
    const last = r.stdout.trim().split("\n").at(-1)!;
    expect(last).toMatch(/^ccp_[A-Za-z0-9_-]{40,}$/);
    db = await openDatabase(env.DATABASE_URL!);
    const row = await db.reader.apiToken.findUnique({ where: { tokenHash: hashToken(last) } });
    expect(row).toMatchObject({ name: "boss-01", role: "SPIDER", revokedAt: null });
  });

  it("token create refuses an unknown role", async () => {
    const r = await cli("token.ts", "create", "--role", "root");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spider, admin or viewer/);
  });

  it("keywords import reads a CSV, reports created/existing, and is idempotent", async () => {
    const csv = join(dir, "kw.csv");
    writeFileSync(csv, "city,job\n北京,Java\n上海,\"Go, Rust\"\n北京,Java\n");
    const first = await cli("keywords.ts", "import", "--source", "boss", csv);
    expect(JSON.parse(first.stdout.trim().split("\n").at(-1)!)).toEqual({ source: "boss", created: 2, existing: 0 });
    writeFileSync(csv, "北京,Java\n广州,Python\n");
    const second = await cli("keywords.ts", "import", "--source", "boss", csv);
    expect(JSON.parse(second.stdout.trim().split("\n").at(-1)!)).toEqual({ source: "boss", created: 1, existing: 1 });
    const jobs = await db.reader.keyword.findMany({ where: { sourceId: "boss" }, orderBy: { id: "asc" } });
    expect(jobs.map((k) => `${k.city}/${k.job}`)).toEqual(["北京/Java", "上海/Go, Rust", "广州/Python"]);
  });

  it("keywords import takes two lists (every city × job)", async () => {
    writeFileSync(join(dir, "cities.txt"), "杭州\n南京\n");
    writeFileSync(join(dir, "jobs.txt"), "测试\n运维\n产品\n");
    const r = await cli("keywords.ts", "import", "--source", "qcwy", "--cities", join(dir, "cities.txt"), "--jobs", join(dir, "jobs.txt"));
    expect(JSON.parse(r.stdout.trim())).toEqual({ source: "qcwy", created: 6, existing: 0 });
  });

  it("keywords import fails clearly on an unknown source or a bad line", async () => {
    writeFileSync(join(dir, "bad.csv"), "北京 Java\n");
    const bad = await cli("keywords.ts", "import", "--source", "boss", join(dir, "bad.csv"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/BAD_USER_INPUT: line 1/);
    writeFileSync(join(dir, "ok.csv"), "北京,Java\n");
    const unknown = await cli("keywords.ts", "import", "--source", "indeed", join(dir, "ok.csv"));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/NOT_FOUND/);
  });
});
