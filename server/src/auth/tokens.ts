// API tokens: random, shown once, stored as SHA-256. A token is high-entropy, so a fast hash is
// the right tool (no password stretching needed) and lets every request be checked cheaply.
import { createHash, randomBytes } from "node:crypto";
import { type Database, enumParam } from "../db/client.ts";
import { type ApiToken, Prisma } from "../../../generated/sqlite/client.ts";
import { Role } from "../../../generated/sqlite/enums.ts";

export { Role };

export interface Principal {
  tokenId: number;
  name: string;
  role: Role;
}

const TOKEN_PREFIX = "ccp_";
/** lastUsedAt is written at most this often per token, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * How long a verified token is trusted without asking the database again. A revocation in this
 * process takes effect at once (revokeToken below); one made by another process (the token CLI,
 * another server instance) within this long.
 */
export const TOKEN_CACHE_TTL_MS = 5_000;
/** Cache entries kept per verifier; beyond it the oldest are dropped. */
const TOKEN_CACHE_MAX = 10_000;
/** Bumped by every revocation through a Database handle: its verifiers' caches are then stale. */
const revocations = new WeakMap<Database, number>();

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export function parseRole(value: string): Role | null {
  const upper = value.toUpperCase();
  return (Object.values(Role) as string[]).includes(upper) ? (upper as Role) : null;
}

export async function createToken(db: Database, role: Role, name: string) {
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  const now = new Date();
  const [row] = await db.transaction((tx) =>
    tx.query<ApiToken>(Prisma.sql`
      INSERT INTO "ApiToken" ("name", "role", "tokenHash", "prefix", "createdAt")
      VALUES (${name}, ${enumParam(db.provider, "Role", role)}, ${hashToken(token)}, ${token.slice(0, 12)}, ${now}) RETURNING *`),
  );
  return { token, row: row! };
}

export async function listTokens(db: Database) {
  return db.reader.apiToken.findMany({ orderBy: { id: "asc" } });
}

/** Revoke by id or by the token's printed prefix; returns how many were revoked. */
export async function revokeToken(db: Database, idOrPrefix: string, at = new Date()) {
  const match = /^\d+$/.test(idOrPrefix) ? Prisma.sql`"id" = ${Number(idOrPrefix)}` : Prisma.sql`"prefix" = ${idOrPrefix}`;
  const n = await db.transaction((tx) =>
    tx.execute(Prisma.sql`UPDATE "ApiToken" SET "revokedAt" = ${at} WHERE ${match} AND "revokedAt" IS NULL`),
  );
  revocations.set(db, (revocations.get(db) ?? 0) + 1);
  return n;
}

export class TokenVerifier {
  private touched = new Map<number, number>();
  /** Verified tokens by the token itself (not stored anywhere else): principal, when, generation. */
  private cache = new Map<string, { principal: Principal | null; at: number; generation: number }>();
  constructor(private readonly db: Database) {}

  /** The principal a bearer token stands for, or null when unknown or revoked. */
  async verify(token: string): Promise<Principal | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
    const generation = revocations.get(this.db) ?? 0;
    const hit = this.cache.get(token);
    if (hit && hit.generation === generation && Date.now() - hit.at < TOKEN_CACHE_TTL_MS) {
      if (hit.principal) this.touch(hit.principal.tokenId);
      return hit.principal;
    }
    const principal = await this.lookup(token);
    if (this.cache.size >= TOKEN_CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(token, { principal, at: Date.now(), generation });
    return principal;
  }

  private async lookup(token: string): Promise<Principal | null> {
    const [row] = await this.db.query<Pick<ApiToken, "id" | "name" | "role" | "revokedAt">>(
      Prisma.sql`SELECT "id", "name", "role", "revokedAt" FROM "ApiToken" WHERE "tokenHash" = ${hashToken(token)}`,
    );
    if (!row || row.revokedAt) return null;
    this.touch(row.id);
    return { tokenId: row.id, name: row.name, role: row.role };
  }

  /** Write lastUsedAt, at most once a TOUCH_INTERVAL_MS per token. */
  private touch(id: number) {
    const now = Date.now();
    if (now - (this.touched.get(id) ?? 0) > TOUCH_INTERVAL_MS) {
      this.touched.set(id, now);
      // Best effort: a failed bookkeeping write must not fail the request.
      this.db
        .transaction((tx) => tx.execute(Prisma.sql`UPDATE "ApiToken" SET "lastUsedAt" = ${new Date(now)} WHERE "id" = ${id}`))
        .catch(() => {});
    }
  }
}

/** Bearer token from an Authorization header value ("Bearer x" or bare "x"). */
export function bearer(value: string | null | undefined): string | null {
  if (!value) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(value);
  return m ? m[1]! : value.trim() || null;
}
