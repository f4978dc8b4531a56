// Job postings: spiders submit each page's postings under their lease; analysts page through them.
import DataLoader from "dataloader";
import { z } from "zod";
import type { Context } from "../context.ts";
import { submitJobPostings } from "../postings/submit.ts";
import { builder } from "./builder.ts";
import { city, idInt, leaseToken, parseInput, search, sourceId, text } from "./validate.ts";

/** Postings one page may carry (the sites serve 15–90). */
export const MAX_POSTINGS_PER_PAGE = 500;

builder.prismaObject("JobPosting", {
  description: "A posting found by the spiders, once per (source, externalId).",
  fields: (t) => ({
    id: t.exposeID("id"),
    sourceId: t.exposeID("sourceId"),
    externalId: t.exposeString("externalId", { description: "The site's own id of the posting." }),
    title: t.exposeString("title"),
    company: t.exposeString("company"),
    city: t.exposeString("city"),
    salary: t.exposeString("salary", { description: "As the site shows it, e.g. 15-25K·13薪." }),
    url: t.exposeString("url"),
    publishedAt: t.expose("publishedAt", { type: "DateTime", nullable: true }),
    firstSeenAt: t.expose("firstSeenAt", { type: "DateTime" }),
    lastSeenAt: t.expose("lastSeenAt", { type: "DateTime" }),
    keywordsSeen: t.int({
      description: "Distinct keywords whose pages listed this posting (on any crawl day still kept: HISTORY_RETENTION_DAYS).",
      resolve: (p, _a, ctx) => keywordsSeen(ctx).load(p.id),
    }),
  }),
});

/** keywordsSeen of every posting a request resolves, in one query (one loader per request). */
const seenLoaders = new WeakMap<Context, DataLoader<number, number>>();
function keywordsSeen(ctx: Context) {
  let loader = seenLoaders.get(ctx);
  if (!loader) {
    loader = new DataLoader(async (ids: readonly number[]) => {
      const pairs = await ctx.db.postingSighting.groupBy({ by: ["postingId", "keywordId"], where: { postingId: { in: [...ids] } } });
      const n = new Map<number, number>();
      for (const { postingId } of pairs) n.set(postingId, (n.get(postingId) ?? 0) + 1);
      return ids.map((id) => n.get(id) ?? 0);
    });
    seenLoaders.set(ctx, loader);
  }
  return loader;
}

const JobPostingInput = builder.inputType("JobPostingInput", {
  fields: (t) => ({
    externalId: t.string({ required: true, description: "The site's stable id (deduplication key within the source)." }),
    title: t.string({ required: true }),
    company: t.string(),
    city: t.string(),
    salary: t.string(),
    url: t.string(),
    publishedAt: t.field({ type: "DateTime" }),
  }),
});

const SubmitResultRef = builder
  .objectRef<{ page: number; accepted: number; created: number }>("SubmitJobPostingsResult")
  .implement({
    fields: (t) => ({
      page: t.exposeInt("page"),
      accepted: t.exposeInt("accepted", { description: "Distinct postings recorded for the page: report this as its jobsFound." }),
      created: t.exposeInt("created", { description: "Postings never seen before." }),
    }),
  });

const optionalText = (max: number) => text().max(max).nullish();
const postingSchema = z.object({
  externalId: text().trim().min(1, "must not be empty").max(128),
  title: text().trim().min(1, "must not be empty").max(256),
  company: optionalText(256),
  city: optionalText(64),
  salary: optionalText(64),
  url: text().max(1000).refine((u) => u === "" || /^https?:\/\//.test(u), "must be an http(s) URL").nullish(),
  publishedAt: z.date().nullish(),
});
const submitArgs = z.object({
  keywordId: idInt,
  leaseToken,
  page: z.number().int().min(1, "must be ≥ 1"),
  postings: z.array(postingSchema).max(MAX_POSTINGS_PER_PAGE),
});
const postingsArgs = z.object({ source: sourceId.nullish(), city: city.nullish(), search: search.nullish() });

builder.mutationFields((t) => ({
  submitJobPostings: t.field({
    type: SubmitResultRef,
    authScopes: { spider: true },
    description:
      "Store one crawled page's postings (deduplicated by source and externalId) under the keyword's lease. Send it before that page's reportPageProgress, with jobsFound = accepted. Idempotent per page: a repeat replaces the page's postings.",
    args: {
      keywordId: t.arg.id({ required: true }),
      leaseToken: t.arg.string({ required: true }),
      page: t.arg.int({ required: true }),
      postings: t.arg({ type: [JobPostingInput], required: true }),
    },
    resolve: (_root, args, ctx) => submitJobPostings(ctx.store, parseInput(submitArgs, args)),
  }),
}));

builder.queryFields((t) => ({
  jobPostings: t.prismaConnection(
    {
      type: "JobPosting",
      cursor: "id",
      description: "Postings in id order (first seen first), filtered by source, city and a title/company substring.",
      args: {
        source: t.arg.id(),
        city: t.arg.string({ description: "The posting's city, exactly." }),
        search: t.arg.string({ description: "Substring of the title or the company." }),
      },
      totalCount: (_conn, args, ctx) => ctx.db.jobPosting.count({ where: postingsWhere(args) }),
      resolve: (query, _root, args, ctx) => ctx.db.jobPosting.findMany({ ...query, where: postingsWhere(args) }),
    },
    { name: "JobPostingConnection" },
    { name: "JobPostingEdge" },
  ),
}));

function postingsWhere(args: { source?: string | null; city?: string | null; search?: string | null }) {
  const a = parseInput(postingsArgs, args);
  const and: object[] = [];
  if (a.source) and.push({ sourceId: a.source });
  if (a.city) and.push({ city: a.city });
  if (a.search) and.push({ OR: [{ title: { contains: a.search } }, { company: { contains: a.search } }] });
  return { AND: and };
}
