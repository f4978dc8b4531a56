// The committed migrations build exactly the schema the models describe, on both databases: an edit
// of prisma/models (or of a CrawlEvent twin) without its migration fails here, not on a user's start.
// Runs `prisma migrate diff --exit-code` (0: in sync, 2: the migrations lack something).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { testProviders } from "./databases.ts";

const run = promisify(execFile);
const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

describe.each(await testProviders())("migrations on %s", (provider) => {
  it("match the models (prisma migrate diff finds nothing to add)", async () => {
    const args = ["prisma", "migrate", "diff", "--from-migrations", `prisma/${provider}/migrations`, "--to-schema-datamodel", `prisma/${provider}`, "--exit-code", "--config", `prisma.${provider}.config.ts`];
    // PostgreSQL: the config replays the migrations in a shadow database of its own, made and dropped on this server.
    const env = { ...process.env, ...(provider === "postgres" ? { DATABASE_URL: ADMIN_URL } : {}) };
    const r = await run("npx", args, { env, timeout: 120_000 }).then(
      (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` }),
    );
    expect(r.out).not.toMatch(/Error/);
    expect(r.code, r.out).toBe(0);
  });
});
