import { z } from "zod";
import { crossProduct, type ImportResult, importKeywords } from "../keywords/import.ts";
import { builder } from "./builder.ts";
import { city, job, parseInput, sourceId } from "./validate.ts";

const ImportResultRef = builder.objectRef<ImportResult>("ImportResult").implement({
  fields: (t) => ({
    source: t.prismaField({
      type: "Source",
      resolve: (query, r, _a, ctx) => ctx.db.source.findUniqueOrThrow({ ...query, where: { id: r.sourceId } }),
    }),
    created: t.exposeInt("created", { description: "Keywords added now." }),
    existing: t.exposeInt("existing", { description: "Keywords that were already there." }),
    requested: t.exposeInt("requested", { description: "Distinct (city, job) pairs asked for." }),
  }),
});

const args = z.object({
  source: sourceId,
  cities: z.array(city).min(1).max(1000),
  jobs: z.array(job).min(1).max(1000),
});

builder.mutationFields((t) => ({
  importKeywords: t.field({
    type: ImportResultRef,
    authScopes: { admin: true },
    description: "Add every city × job of a source (admin). Idempotent: a re-import adds only what is new.",
    args: {
      source: t.arg.id({ required: true }),
      cities: t.arg.stringList({ required: true }),
      jobs: t.arg.stringList({ required: true }),
    },
    resolve: async (_root, raw, ctx) => {
      const a = parseInput(args, raw);
      const result = await importKeywords(ctx.database, a.source, crossProduct(a.cities, a.jobs));
      // New keywords are IDLE ones: the distribution's total and idle moved.
      if (result.created) void ctx.bus.publish("crawlChanged", { sourceId: a.source, keywordIds: [], all: true });
      return result;
    },
  }),
}));
