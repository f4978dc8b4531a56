// The control plane's GraphQL API, typed by codegen (operations in spiders/src/*.graphql). Calls
// are retried with backoff while the server is unreachable or answers 5xx, for up to
// SERVER_RETRY_MS, so a restarting server costs a wait, not a page. A refusal with a code
// (LEASE_LOST, INVALID_TRANSITION, …) is final and surfaces as ApiError.
import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { type Backoff, retry } from "./backoff.ts";

/** The server refused the operation; `code` is its extensions.code. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** The server could not be reached or failed (retryable). */
export class ServerUnavailable extends Error {
  override name = "ServerUnavailable";
}

export interface ServerClientOptions extends Backoff {
  url: string;
  token: string;
  timeoutMs: number;
  /** How long one call is retried before it fails with ServerUnavailable. */
  retryForMs: number;
  onRetry?: (operation: string, e: Error, attempt: number) => void;
}

/**
 * Errors worth retrying: a masked internal fault (no code, or Yoga's INTERNAL_SERVER_ERROR) and
 * DATABASE_UNAVAILABLE (also sent with HTTP 503). Every
 * other code (LEASE_LOST, BAD_USER_INPUT, GRAPHQL_VALIDATION_FAILED, …) is the server's answer.
 */
const TRANSIENT = new Set(["", "INTERNAL_SERVER_ERROR", "DATABASE_UNAVAILABLE"]);

export class ServerClient {
  constructor(private readonly opts: ServerClientOptions) {}

  private async once<T, V>(query: string, variables: V, operationName: string | undefined): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.opts.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${this.opts.token}` },
        body: JSON.stringify({ query, variables, operationName }),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (e) {
      throw new ServerUnavailable(`${this.opts.url}: ${(e as Error).cause ?? (e as Error).message}`);
    }
    const text = await res.text().catch(() => "");
    if (res.status >= 500) throw new ServerUnavailable(`HTTP ${res.status} from ${this.opts.url}`);
    let body: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new ServerUnavailable(`HTTP ${res.status}, not JSON: ${text.slice(0, 100)}`);
    }
    const err = body.errors?.[0];
    if (err) {
      const code = err.extensions?.code ?? "";
      if (!TRANSIENT.has(code)) throw new ApiError(code, err.message);
      throw new ServerUnavailable(`${code || "error"}: ${err.message}`);
    }
    if (!body.data) throw new ServerUnavailable(`HTTP ${res.status} without data`);
    return body.data;
  }

  /** Printed text and operation name per document: printed once, sent on every page. */
  private readonly printed = new WeakMap<object, { query: string; name?: string }>();

  /** Run one operation, retrying while the server is unavailable. */
  request<T, V>(document: TypedDocumentNode<T, V>, variables: V): Promise<T> {
    let doc = this.printed.get(document);
    if (!doc) {
      const def = document.definitions.find((d) => d.kind === "OperationDefinition");
      doc = { query: print(document), name: def && "name" in def ? def.name?.value : undefined };
      this.printed.set(document, doc);
    }
    const { query, name } = doc;
    return retry(() => this.once<T, V>(query, variables, name), {
      minMs: this.opts.minMs,
      maxMs: this.opts.maxMs,
      maxRetryTime: this.opts.retryForMs,
      permanent: (e) => e instanceof ApiError,
      onRetry: (e, attempt) => this.opts.onRetry?.(name ?? "operation", e, attempt),
    });
  }
}
