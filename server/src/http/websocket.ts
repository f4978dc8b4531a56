// graphql-ws on the HTTP server's port, executing through the same Yoga (same schema, plugins,
// context and limits as HTTP). A token is checked when the socket opens and again for every
// operation, so a revoked token stops working on a socket that is already open.
import type { Server } from "node:http";
import type { DocumentNode, GraphQLError } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import { useServer } from "graphql-ws/use/ws";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import { bearer, type Principal } from "../auth/tokens.ts";

export interface WebSocketOptions {
  server: Server;
  yoga: YogaServerInstance<any, any>;
  /** The principal of a token (null without one); throws for an unknown or revoked token. */
  principalFor(token: string | null): Promise<Principal | null>;
  /** Whether a socket without a token may subscribe. */
  publicReads: boolean;
  maxPayload: number;
  /** Where a client's protocol errors (an oversized or broken frame) are logged. */
  log?: Logger;
}

/** The token from graphql-ws connectionParams: `Authorization: Bearer …` (or a bare `token`). */
const socketToken = (params: Record<string, unknown> | undefined) =>
  bearer((params?.Authorization ?? params?.authorization ?? params?.token) as string | undefined);

export function attachWebSocket({ server, yoga, principalFor, publicReads, maxPayload, log }: WebSocketOptions) {
  const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload });
  /** Operations running, by id, with their root field (for /metrics). */
  const running = new Map<object, Map<string, string>>();
  const disposable = useServer<Record<string, unknown> | undefined, { principal?: Principal | null }>(
    {
      execute: (args) => (args.rootValue as any).execute(args),
      subscribe: (args) => (args.rootValue as any).subscribe(args),
      onConnect: async (ctx) => {
        try {
          ctx.extra.principal = await principalFor(socketToken(ctx.connectionParams));
        } catch {
          return false; // unknown or revoked token: the socket closes with 4403 Forbidden
        }
        return publicReads || ctx.extra.principal !== null;
      },
      onComplete: (ctx, id) => {
        running.get(ctx)?.delete(id);
      },
      onClose: (ctx) => {
        running.delete(ctx);
      },
      onSubscribe: async (ctx, _id, params) => {
        try {
          ctx.extra.principal = await principalFor(socketToken(ctx.connectionParams));
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            req: ctx.extra.request,
            socket: ctx.extra.socket,
            params,
            principal: ctx.extra.principal ?? null,
          });
          const args = {
            schema,
            operationName: params.operationName,
            document: parse(params.query),
            variableValues: params.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          const errors = validate(args.schema, args.document);
          if (!errors.length) {
            const op = (args.document as DocumentNode).definitions.find((d) => d.kind === "OperationDefinition");
            const first = op && "selectionSet" in op ? op.selectionSet.selections[0] : undefined;
            const field = first && first.kind === "Field" ? first.name.value : "unknown";
            if (!running.has(ctx)) running.set(ctx, new Map());
            running.get(ctx)!.set(_id, field);
          }
          return errors.length ? errors : args;
        } catch (e) {
          // A refused token or a document that does not parse: an error message, not a closed socket.
          return [e as GraphQLError];
        }
      },
    },
    wss,
  );
  // A client's bad frame (over maxPayload, say) makes ws close that socket (1009, 1002…) and emit
  // 'error'; graphql-ws would print it unstructured to stderr as an "internal error". It is the
  // client's: log it as a pino line instead.
  wss.on("connection", (socket) => {
    socket.removeAllListeners("error");
    socket.on("error", (err: Error & { code?: string }) => log?.warn({ err: err.message, code: err.code }, "websocket client error; socket closed"));
  });
  return {
    stats() {
      const operations: Record<string, number> = {};
      for (const ops of running.values()) for (const field of ops.values()) operations[field] = (operations[field] ?? 0) + 1;
      return { sockets: wss.clients.size, operations };
    },
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
