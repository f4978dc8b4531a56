// Every error a client can get carries `extensions.code`. graphql-js leaves codes off the errors it
// makes itself (syntax, validation, variable coercion) and so do graphql-armor's limits; this
// plugin names them, before Yoga's error masking sees them.
import { type GraphQLError, Kind } from "graphql";
import { createGraphQLError, isAsyncIterable, type Plugin } from "graphql-yoga";
import { ErrorCode } from "../errors.ts";

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
        } else if (result && (result as { kind?: string }).kind !== Kind.DOCUMENT) {
          // not a document: leave it
        }
      };
    },
    onValidate() {
      return ({ result, setResult }) => {
        if (result.length) setResult(result.map((e) => withCode(e, codeFor(e, GraphQLErrorCode.VALIDATION_FAILED))));
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result) || !result.errors?.length) return;
          setResult({
            ...result,
            errors: result.errors.map((e) => (e.extensions?.code ? e : codeFor(e, "") ? withCode(e, codeFor(e, "")) : e)),
          });
        },
      };
    },
  };
}
