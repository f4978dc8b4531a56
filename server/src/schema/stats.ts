import { type CrawlStats, crawlStats, type StatusCounts } from "../crawl/stats.ts";
import { notFound } from "../errors.ts";
import { builder } from "./builder.ts";
import { SourceRef } from "./source.ts";
import { bySource, parseInput } from "./validate.ts";

const StatusCountsRef = builder.objectRef<StatusCounts>("StatusCounts").implement({
  fields: (t) => ({
    idle: t.exposeInt("idle"),
    crawling: t.exposeInt("crawling"),
    completed: t.exposeInt("completed"),
    failed: t.exposeInt("failed"),
    partial: t.exposeInt("partial"),
  }),
});

const CrawlStatsRef = builder.objectRef<CrawlStats>("CrawlStats").implement({
  description: "A source's crawl on one crawl day.",
  fields: (t) => ({
    source: t.field({ type: SourceRef, resolve: (s) => s.source }),
    date: t.field({ type: "Date", resolve: (s) => s.date }),
    total: t.exposeInt("total", { description: "Keywords of the source." }),
    used: t.exposeInt("used", { description: "Keywords claimed that day." }),
    unused: t.exposeInt("unused"),
    byStatus: t.field({ type: StatusCountsRef, resolve: (s) => s.byStatus }),
    jobsFound: t.exposeInt("jobsFound"),
    pagesCrawled: t.exposeInt("pagesCrawled"),
  }),
});

builder.queryFields((t) => ({
  stats: t.field({
    type: CrawlStatsRef,
    description: "A source's statistics for a crawl day (default: today in CRAWL_TZ).",
    args: { source: t.arg.id({ required: true }), date: t.arg({ type: "Date" }) },
    resolve: (_root, args, ctx) => {
      const a = parseInput(bySource, { source: args.source });
      return crawlStats(ctx.database, ctx.calendar, a.source, args.date);
    },
  }),
}));

builder.subscriptionFields((t) => ({
  crawlStatusDistribution: t.field({
    type: CrawlStatsRef,
    description: "Today's statistics of a source: at once, then after every change (bursts coalesced).",
    args: { source: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const { source } = parseInput(bySource, args);
      if (!(await ctx.db.source.findUnique({ where: { id: source }, select: { id: true } }))) {
        throw notFound(`source "${source}" does not exist`);
      }
      return ctx.distribution.subscribe(source);
    },
    resolve: (stats) => stats,
  }),
}));
