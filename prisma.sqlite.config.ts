// Prisma CLI config for the embedded SQLite database. Prisma 6's JS schema engine runs through a
// driver adapter, so migrate works offline (no native engine download).
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

type Adapter = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;

// `migrate dev` replays migrations through better-sqlite3 prepare(), which rejects
// multi-statement scripts (P3006): send parameterless SQL through executeScript instead.
function execScripts<T extends Adapter>(a: T): T {
  const executeRaw = a.executeRaw.bind(a);
  a.executeRaw = async (q) => (q.args.length === 0 ? (await a.executeScript(q.sql), 0) : executeRaw(q));
  return a;
}

class ForMigrate extends PrismaBetterSQLite3 {
  async connect() {
    return execScripts(await super.connect());
  }
  async connectToShadowDb() {
    return execScripts(await super.connectToShadowDb());
  }
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/sqlite",
  migrations: { path: "prisma/sqlite/migrations" },
  adapter: async () => new ForMigrate({ url: process.env.SQLITE_URL ?? "file:./dev.db" }),
});
