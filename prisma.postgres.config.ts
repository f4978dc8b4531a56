// Prisma CLI config for PostgreSQL (DATABASE_URL). Works around three adapter-pg problems under the
// migrate engine: pg_catalog `name`/`"char"` columns (prisma/orm#27403), a connectionString that
// silently overrides the shadow database name, and the shadow pool left open when it is dropped.
import { randomUUID } from "node:crypto";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";

const OID_REMAP: Record<number, number> = { 18: 25, 19: 25, 1003: 1009 };

class NameAsTextClient extends pg.Client {
  query(...args: any[]): any {
    const fix = (res: any) => {
      for (const r of Array.isArray(res) ? res : [res])
        for (const f of r?.fields ?? []) if (OID_REMAP[f.dataTypeID]) f.dataTypeID = OID_REMAP[f.dataTypeID];
      return res;
    };
    const cb = args[args.length - 1];
    if (typeof cb === "function") {
      args[args.length - 1] = (e: unknown, r: unknown) => cb(e, e ? r : fix(r));
      return (super.query as any)(...args);
    }
    const ret = (super.query as any)(...args);
    return ret && typeof ret.then === "function" ? ret.then(fix) : ret;
  }
}

function pgConfig(url = process.env.DATABASE_URL): pg.PoolConfig {
  if (!url) throw new Error("DATABASE_URL is not set");
  const u = new URL(url);
  return {
    host: u.hostname || undefined,
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || undefined,
    password: decodeURIComponent(u.password) || undefined,
    database: decodeURIComponent(u.pathname.slice(1)) || undefined,
    Client: NameAsTextClient,
  } as pg.PoolConfig;
}

class ForMigrate extends PrismaPg {
  async connectToShadowDb() {
    const main = await this.connect();
    const database = `prisma_shadow_${randomUUID().replaceAll("-", "")}`;
    await main.executeScript(`CREATE DATABASE "${database}"`);
    const shadow = await new PrismaPg({ ...pgConfig(), database } as pg.PoolConfig).connect();
    const close = shadow.dispose.bind(shadow);
    shadow.dispose = async () => {
      await close();
      await main.executeScript(`DROP DATABASE IF EXISTS "${database}"`);
      await main.dispose();
    };
    return shadow;
  }
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/postgres",
  migrations: { path: "prisma/postgres/migrations" },
  adapter: async () => new ForMigrate(pgConfig()),
});
