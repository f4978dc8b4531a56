import { z } from "zod";
import { Prisma } from "../../../generated/sqlite/client.ts";
import { builder } from "./builder.ts";
import { notFound } from "../errors.ts";
import { parseInput, sourceId } from "./validate.ts";

export const SourceRef = builder.prismaObject("Source", {
  description: "A job site. Its settings govern every keyword of the site.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    maxPages: t.exposeInt("maxPages", { description: "Pages crawled per keyword at most." }),
    maxRetries: t.exposeInt("maxRetries", { description: "Claims of a FAILED keyword allowed per crawl day." }),
    staleAfterSeconds: t.exposeInt("staleAfterSeconds", {
      description: "A CRAWLING keyword without a heartbeat for this long becomes PARTIAL.",
    }),
    enabled: t.exposeBoolean("enabled", { description: "Disabled sources hand out no claims." }),
    keywordCount: t.exposeInt("keywordCount"),
  }),
});

const UpdateSourceInput = builder.inputType("UpdateSourceInput", {
  fields: (t) => ({
    maxPages: t.int(),
    maxRetries: t.int(),
    staleAfterSeconds: t.int(),
    enabled: t.boolean(),
  }),
});

const updateSourceSchema = z.object({
  id: sourceId,
  input: z.object({
    maxPages: z.number().int().min(1).max(1000).nullish(),
    maxRetries: z.number().int().min(0).max(100).nullish(),
    staleAfterSeconds: z.number().int().min(1).max(7 * 24 * 3600).nullish(),
    enabled: z.boolean().nullish(),
  }),
});

builder.queryFields((t) => ({
  sources: t.prismaField({
    type: ["Source"],
    resolve: (query, _root, _args, ctx) => ctx.db.source.findMany({ ...query, orderBy: { id: "asc" } }),
  }),
}));

builder.mutationFields((t) => ({
  updateSource: t.prismaField({
    type: "Source",
    authScopes: { admin: true },
    description: "Change a source's settings (admin). Omitted fields keep their value.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateSourceInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id, input } = parseInput(updateSourceSchema, args);
      const data = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
      const changed = await ctx.database.transaction(async (tx) => {
        const sets = Object.entries(data).map(([column, value]) => Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}`);
        if (!sets.length) return (await tx.query(Prisma.sql`SELECT 1 FROM "Source" WHERE "id" = ${id}`)).length;
        return tx.execute(Prisma.sql`UPDATE "Source" SET ${Prisma.join(sets)}, "updatedAt" = ${new Date()} WHERE "id" = ${id}`);
      });
      if (!changed) throw notFound(`source "${id}" does not exist`);
      const source = await ctx.db.source.findUniqueOrThrow({ ...query, where: { id } });
      // maxPages and maxRetries change what the distribution means; tell watchers.
      void ctx.bus.publish("crawlChanged", { sourceId: id, keywordIds: [], all: true });
      return source;
    },
  }),
}));
