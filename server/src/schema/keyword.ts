import { z } from "zod";
import { Repeater } from "graphql-yoga";
import type { Keyword } from "../../../generated/sqlite/client.ts";
import { CrawlStatus, effectiveStatus } from "../crawl/rules.ts";
import type { Context } from "../context.ts";
import { notFound } from "../errors.ts";
import { builder } from "./builder.ts";
import { byId, byOptionalSource, parseInput, search, sourceId } from "./validate.ts";

export const CrawlStatusEnum = builder.enumType(CrawlStatus, {
  name: "CrawlStatus",
  description: "Where a keyword is in today's crawl. State stored for another crawl day reads as IDLE.",
});

/** Crawl-state counters belong to a crawl day: on any other day they read as zero. */
const today = (kw: Keyword, ctx: Context) => kw.crawlDate === ctx.calendar.today();
const ofToday = <T>(kw: Keyword, ctx: Context, value: T, otherwise: T) => (today(kw, ctx) ? value : otherwise);

export const KeywordRef = builder.prismaObject("Keyword", {
  description: "One search (source, city, job) and its crawl state for the current crawl day.",
  fields: (t) => ({
    id: t.exposeID("id"),
    sourceId: t.exposeID("sourceId"),
    source: t.relation("source"),
    city: t.exposeString("city"),
    job: t.exposeString("job"),
    status: t.field({ type: CrawlStatusEnum, resolve: (kw, _a, ctx) => effectiveStatus(kw, ctx.calendar.today()) }),
    crawlDate: t.field({
      type: "Date",
      nullable: true,
      description: "The crawl day the stored state belongs to (the last day it was claimed).",
      resolve: (kw) => kw.crawlDate,
    }),
    lastRequestedAt: t.expose("lastRequestedAt", { type: "DateTime", nullable: true }),
    lastCompletedPage: t.int({ resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.lastCompletedPage, 0) }),
    totalPages: t.int({ description: "0 = unknown.", resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.totalPages, 0) }),
    jobsFound: t.int({
      description: "Sum over the distinct pages reported today.",
      resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.jobsFound, 0),
    }),
    pagesCrawled: t.int({ resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.pagesCrawled, 0) }),
    crawlStartedAt: t.field({ type: "DateTime", nullable: true, resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.crawlStartedAt, null) }),
    heartbeatAt: t.field({ type: "DateTime", nullable: true, resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.heartbeatAt, null) }),
    crawlerId: t.string({ resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.crawlerId, "") }),
    errorMessage: t.string({ resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.errorMessage, "") }),
    retryCount: t.int({ resolve: (kw, _a, ctx) => ofToday(kw, ctx, kw.retryCount, 0) }),
    events: t.relation("events", {
      description: "Status transitions, newest first (of the crawl days still kept: HISTORY_RETENTION_DAYS).",
      args: { last: t.arg.int({ defaultValue: 50 }) },
      query: (args) => ({ orderBy: { id: "desc" }, take: Math.min(Math.max(args.last ?? 50, 1), 500) }),
    }),
    pageReports: t.relation("pageReports", {
      description: "Pages reported on a crawl day (default: today), in page order.",
      args: { date: t.arg({ type: "Date" }) },
      query: (args, ctx) => ({ where: { crawlDate: args.date ?? ctx.calendar.today() }, orderBy: { page: "asc" } }),
    }),
  }),
});

builder.prismaObject("CrawlEvent", {
  description: "One status transition of a keyword (append-only).",
  fields: (t) => ({
    // A bigint on PostgreSQL (64-bit ids), a number on SQLite: GraphQL's ID takes neither as is.
    id: t.id({ resolve: (e) => String(e.id) }),
    keywordId: t.exposeID("keywordId"),
    sourceId: t.exposeID("sourceId"),
    crawlDate: t.expose("crawlDate", { type: "Date" }),
    from: t.expose("from", { type: CrawlStatusEnum }),
    to: t.expose("to", { type: CrawlStatusEnum }),
    reason: t.exposeString("reason"),
    crawlerId: t.exposeString("crawlerId"),
    at: t.expose("at", { type: "DateTime" }),
  }),
});

builder.prismaObject("PageReport", {
  description: "One crawled page of a keyword on a crawl day.",
  fields: (t) => ({
    page: t.exposeInt("page"),
    jobsFound: t.exposeInt("jobsFound"),
    crawlerId: t.exposeString("crawlerId"),
    crawlDate: t.expose("crawlDate", { type: "Date" }),
    reportedAt: t.expose("reportedAt", { type: "DateTime" }),
  }),
});

const keywordsArgs = z.object({
  source: sourceId.nullish(),
  status: z.enum(CrawlStatus).nullish(),
  search: search.nullish(),
});

/** Prisma filter for a keyword's effective status today. */
function statusWhere(status: CrawlStatus, day: string) {
  if (status === CrawlStatus.IDLE) {
    return { OR: [{ crawlDate: null }, { crawlDate: { not: day } }, { status: CrawlStatus.IDLE }] };
  }
  return { status, crawlDate: day };
}

builder.queryFields((t) => ({
  keywords: t.prismaConnection({
    type: "Keyword",
    cursor: "id",
    description: "Keywords in id order, filtered by source, status (as of today) and city/job text.",
    args: {
      source: t.arg.id(),
      status: t.arg({ type: CrawlStatusEnum }),
      search: t.arg.string({ description: "Substring of the city or the job." }),
    },
    totalCount: (_conn, args, ctx) => ctx.db.keyword.count({ where: keywordsWhere(args, ctx) }),
    resolve: (query, _root, args, ctx) => ctx.db.keyword.findMany({ ...query, where: keywordsWhere(args, ctx) }),
  }, { name: "KeywordConnection" }, { name: "KeywordEdge" }),
  keyword: t.prismaField({
    type: "Keyword",
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => {
      const { id } = parseInput(byId, args);
      return ctx.db.keyword.findUnique({ ...query, where: { id } });
    },
  }),
}));

function keywordsWhere(args: { source?: string | null; status?: CrawlStatus | null; search?: string | null }, ctx: Context) {
  const a = parseInput(keywordsArgs, args);
  const and: object[] = [];
  if (a.source) and.push({ sourceId: a.source });
  if (a.status) and.push(statusWhere(a.status, ctx.calendar.today()));
  if (a.search) and.push({ OR: [{ city: { contains: a.search } }, { job: { contains: a.search } }] });
  return { AND: and };
}

builder.mutationFields((t) => ({
  resetKeyword: t.prismaField({
    type: "Keyword",
    authScopes: { admin: true },
    description: "Forget a keyword's crawl state for today (admin): it becomes IDLE and any live lease is revoked.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => ctx.store.reset(parseInput(byId, args).id),
  }),
  forceReleaseKeyword: t.prismaField({
    type: "Keyword",
    authScopes: { admin: true },
    description:
      "Take a CRAWLING keyword from its crawler without its lease (admin): it becomes PARTIAL, the next claim resumes it, and the crawler's late reports get LEASE_LOST.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => ctx.store.forceRelease(parseInput(byId, args).id),
  }),
  retryKeyword: t.prismaField({
    type: "Keyword",
    authScopes: { admin: true },
    description: "Give a FAILED keyword another attempt (admin): it becomes PARTIAL and the next claim resumes it.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => ctx.store.retry(parseInput(byId, args).id),
  }),
}));

builder.subscriptionFields((t) => ({
  keywordChanged: t.field({
    type: KeywordRef,
    description: "Every change of a keyword's crawl state, optionally of one source.",
    args: { source: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const { source } = parseInput(byOptionalSource, args);
      if (source && !(await ctx.db.source.findUnique({ where: { id: source }, select: { id: true } }))) {
        throw notFound(`source "${source}" does not exist`);
      }
      const changes = ctx.bus.subscribe("crawlChanged");
      // A Repeater, not an async generator: when the client leaves, stop() ends the bus iterator
      // even while it waits for the next change (a generator could not be returned until then).
      return new Repeater<number>(async (push, stop) => {
        void stop.then(() => changes.return?.());
        for await (const c of changes) {
          if (source && c.sourceId !== source) continue;
          for (const id of c.keywordIds) await push(id);
        }
        stop();
      });
    },
    resolve: async (parent, _args, ctx) => {
      const id = parent as number;
      const kw = await ctx.db.keyword.findUnique({ where: { id } });
      if (!kw) throw notFound(`keyword ${id} no longer exists`);
      return kw;
    },
  }),
}));
