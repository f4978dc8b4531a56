// Every error a client can act on carries one of these codes in `extensions.code`.
import { createGraphQLError } from "graphql-yoga";

export const ErrorCode = {
  LEASE_LOST: "LEASE_LOST",
  INVALID_TRANSITION: "INVALID_TRANSITION",
  NOT_FOUND: "NOT_FOUND",
  BAD_USER_INPUT: "BAD_USER_INPUT",
  UNAUTHENTICATED: "UNAUTHENTICATED",
  FORBIDDEN: "FORBIDDEN",
  /** A collector sink that cannot be used: its broker is unreachable, or not supported (KAFKA). */
  SINK_UNAVAILABLE: "SINK_UNAVAILABLE",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
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
