// Every error a client can get carries `extensions.code`. graphql-js leaves codes off the errors it
// makes itself (syntax, validation, variable coercion) and so do graphql-armor's limits; this
// plugin names them, before Yoga's error masking sees them.
import type { GraphQLError } from "graphql";
import { createGraphQLError, isAsyncIterable, type Plugin } from "graphql-yoga";
import { databaseUnavailable, ErrorCode, isDatabaseUnavailable } from "../errors.ts";

/** Codes graphql-js's own errors get (the names Apollo made common). */
export const GraphQLErrorCode = {
  PARSE_FAILED: "GRAPHQL_PARSE_FAILED",
  VALIDATION_FAILED: "GRAPHQL_VALIDATION_FAILED",
} as const;

const LIMIT = /limit of \d+ exceeded|exceeds maximum operation depth|max(imum)? (depth|tokens|aliases)/i;

function withCode(error: GraphQLError, code: string): GraphQLError {
  if (error.extensions?.code) return error;
  // A fresh error (no originalError) so masking treats it as the client's, not an internal fault.
  return createGraphQLError(error.message.replace(/^Syntax Error: /, ""), {
    nodes: error.nodes,
    path: error.path,
    extensions: { ...error.extensions, code },
  });
}

/** The error's place in the document and result, on a replacement error. */
function withPath(replacement: GraphQLError, original: GraphQLError): GraphQLError {
  return createGraphQLError(replacement.message, { nodes: original.nodes, path: original.path, extensions: replacement.extensions });
}

/** Keep the HTTP status Yoga chose for the original error. */
function withStatus(tagged: GraphQLError, original: GraphQLError): GraphQLError {
  const http = original.extensions?.http;
  if (http) (tagged.extensions as Record<string, unknown>).http = http;
  return tagged;
}

function codeFor(error: GraphQLError, fallback: string): string {
  if (LIMIT.test(error.message)) return ErrorCode.BAD_USER_INPUT;
  if (error.message.startsWith('Variable "$')) return ErrorCode.BAD_USER_INPUT;
  // Pothos refuses bad connection arguments (e.g. `first` over the maximum size) this way.
  if ((error.originalError as Error | undefined)?.name === "PothosValidationError") return ErrorCode.BAD_USER_INPUT;
  return fallback;
}

export function useErrorCodes(): Plugin {
  return {
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof Error) {
          const e = result as GraphQLError;
          replaceParseResult(withCode(e, codeFor(e, GraphQLErrorCode.PARSE_FAILED)) as never);
        }
      };
    },
    onValidate() {
      return ({ result, setResult }) => {
        if (result.length) setResult(result.map((e) => withCode(e, codeFor(e, GraphQLErrorCode.VALIDATION_FAILED))));
      };
    },
    // Last stop before the response: refusals made before parsing (CSRF, malformed requests) get
    // a code too — FORBIDDEN for the CSRF check (HTTP 403), BAD_USER_INPUT otherwise.
    onResultProcess({ result, setResult }) {
      if (isAsyncIterable(result)) return;
      const tag = (r: { errors?: readonly GraphQLError[] }) => {
        if (!r.errors?.some((e) => !e.extensions?.code)) return r;
        return {
          ...r,
          errors: r.errors.map((e) => {
            const status = (e.extensions?.http as { status?: number } | undefined)?.status;
            const code = status === 403 ? ErrorCode.FORBIDDEN : codeFor(e, ErrorCode.BAD_USER_INPUT);
            return e.extensions?.code ? e : withStatus(withCode(e, code), e);
          }),
        };
      };
      setResult(Array.isArray(result) ? result.map(tag) : tag(result as never));
    },
    // Yoga answers a body type it cannot parse (text/xml, octet-stream, …) with an empty 415; give
    // it the GraphQL error shape and a code like every other refusal.
    onResponse({ response, setResponse, fetchAPI }) {
      if (response.status !== 415 || response.headers.get("content-type")) return;
      const body = { errors: [{ message: "unsupported content type: send application/json", extensions: { code: ErrorCode.BAD_USER_INPUT } }] };
      setResponse(new fetchAPI.Response(JSON.stringify(body), { status: 415, headers: { "content-type": "application/json" } }));
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result) || !result.errors?.length) return;
          setResult({
            ...result,
            errors: result.errors.map((e) => {
              if (e.extensions?.code) return e;
              // A lost connection or a lock held elsewhere: a retryable 503, not a masked fault.
              if (isDatabaseUnavailable(e.originalError)) return withPath(databaseUnavailable(), e);
              return codeFor(e, "") ? withCode(e, codeFor(e, "")) : e;
            }),
          });
        },
      };
    },
  };
}
