// Every error a client can act on carries one of these codes in `extensions.code`.
import { createGraphQLError } from "graphql-yoga";

export const ErrorCode = {
  LEASE_LOST: "LEASE_LOST",
  INVALID_TRANSITION: "INVALID_TRANSITION",
  NOT_FOUND: "NOT_FOUND",
  BAD_USER_INPUT: "BAD_USER_INPUT",
  UNAUTHENTICATED: "UNAUTHENTICATED",
  FORBIDDEN: "FORBIDDEN",
  /** The database cannot be used right now (connection lost, lock held elsewhere): retry later (HTTP 503). */
  DATABASE_UNAVAILABLE: "DATABASE_UNAVAILABLE",
  /** A collector sink that cannot be used: its broker is unreachable, or not supported (KAFKA). */
  SINK_UNAVAILABLE: "SINK_UNAVAILABLE",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  DATABASE_UNAVAILABLE: 503,
};

/** A GraphQL error with a typed code; safe to show to clients (not masked). */
export function apiError(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
  const status = HTTP_STATUS[code];
  return createGraphQLError(message, {
    extensions: { code, ...extra, ...(status ? { http: { status } } : {}) },
  });
}

export const badInput = (message: string, extra: Record<string, unknown> = {}) =>
  apiError(ErrorCode.BAD_USER_INPUT, message, extra);
export const notFound = (message: string) => apiError(ErrorCode.NOT_FOUND, message);

/** PostgreSQL SQLSTATE classes 08 (connection) and 57P (operator intervention: shutdown, terminated). */
const PG_UNAVAILABLE = /^(08|57P)/;
const NET_UNAVAILABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "SQLITE_BUSY", "SQLITE_LOCKED"]);

/** Whether an error means the database is away or locked (worth a retry), not that the request is wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; originalError?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    const code = typeof e.code === "string" ? e.code : "";
    if (PG_UNAVAILABLE.test(code) || NET_UNAVAILABLE.has(code)) return true;
    const message = typeof e.message === "string" ? e.message : "";
    if (/Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i.test(message)) return true;
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return false;
}

export const databaseUnavailable = () => apiError(ErrorCode.DATABASE_UNAVAILABLE, "the database is unavailable right now; retry later");
