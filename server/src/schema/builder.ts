// Every Pothos generic and plugin lives here; entity files under schema/ only register types.
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import type PrismaTypes from "../../../generated/pothos-types.ts";
import { getDatamodel } from "../../../generated/pothos-types.ts";
import type { Context } from "../context.ts";
import { apiError, ErrorCode } from "../errors.ts";
import { Role } from "../auth/tokens.ts";

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string | number };
    Date: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date };
  };
  AuthScopes: { read: boolean; spider: boolean; admin: boolean };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      read: ctx.config.PUBLIC_READS || ctx.principal !== null,
      spider: ctx.principal?.role === Role.SPIDER || ctx.principal?.role === Role.ADMIN,
      admin: ctx.principal?.role === Role.ADMIN,
    }),
    unauthorizedError: (_parent, ctx, info) =>
      ctx.principal
        ? apiError(ErrorCode.FORBIDDEN, `role ${ctx.principal.role} may not use ${info.parentType.name}.${info.fieldName}`)
        : apiError(ErrorCode.UNAUTHENTICATED, `${info.parentType.name}.${info.fieldName} needs a bearer token`),
  },
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    maxConnectionSize: 500,
    defaultConnectionSize: 50,
  },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});
