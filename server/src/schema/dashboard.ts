// What the live dashboard reads beyond stats and keywords: who is asking (to show or hide operator
// actions), today's transitions per (from, to), per-minute activity, completion over the day, and
// the crawler fleet.
import { z } from "zod";
import { Role } from "../auth/tokens.ts";
import {
  type ActivityPoint,
  type CompletionPoint,
  type Crawler,
  MAX_ACTIVITY_MINUTES,
  RATE_WINDOW_MINUTES,
  type TransitionCount,
} from "../crawl/activity.ts";
import type { Context } from "../context.ts";
import { notFound } from "../errors.ts";
import { builder } from "./builder.ts";
import { CrawlStatusEnum, KeywordRef } from "./keyword.ts";
import { parseInput, sourceId } from "./validate.ts";

const RoleEnum = builder.enumType(Role, { name: "Role" });

const ViewerRef = builder.objectRef<{ principal: Context["principal"] }>("Viewer").implement({
  description: "Who is asking: the bearer token's role and name; both null without a token.",
  fields: (t) => ({
    role: t.field({ type: RoleEnum, nullable: true, resolve: (v) => v.principal?.role ?? null }),
    name: t.string({ nullable: true, resolve: (v) => v.principal?.name ?? null }),
  }),
});

const CrawlDayRef = builder.objectRef<{ date: string; startsAt: Date; timeZone: string }>("CrawlDay").implement({
  description: "The current crawl day: the calendar day in CRAWL_TZ.",
  fields: (t) => ({
    date: t.field({ type: "Date", resolve: (d) => d.date }),
    startsAt: t.expose("startsAt", { type: "DateTime" }),
    timeZone: t.exposeString("timeZone"),
  }),
});

const TransitionCountRef = builder.objectRef<TransitionCount>("TransitionCount").implement({
  description: "How many times keywords went from one status to another on a crawl day.",
  fields: (t) => ({
    from: t.field({ type: CrawlStatusEnum, resolve: (c) => c.from }),
    to: t.field({ type: CrawlStatusEnum, resolve: (c) => c.to }),
    count: t.exposeInt("count"),
  }),
});

const ActivityPointRef = builder.objectRef<ActivityPoint>("ActivityPoint").implement({
  description: "Pages reported and jobs found in the minute starting at `at`.",
  fields: (t) => ({
    at: t.expose("at", { type: "DateTime" }),
    pages: t.exposeInt("pages"),
    jobsFound: t.exposeInt("jobsFound"),
  }),
});

const CompletionPointRef = builder.objectRef<CompletionPoint>("CompletionPoint").implement({
  description: "Keywords completed on the crawl day up to the minute starting at `at`.",
  fields: (t) => ({
    at: t.expose("at", { type: "DateTime" }),
    completed: t.exposeInt("completed"),
  }),
});

const CrawlerRef = builder.objectRef<Crawler>("Crawler").implement({
  description: "A crawler seen today (a transition or a page report under its crawlerId).",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The crawlerId it claims with." }),
    sources: t.field({ type: ["ID"], resolve: (c) => c.sources }),
    holding: t.field({ type: [KeywordRef], description: "Keywords it is crawling now.", resolve: (c) => c.holding }),
    lastHeartbeatAt: t.expose("lastHeartbeatAt", { type: "DateTime", description: "Its last transition, page report or heartbeat." }),
    pagesPerMinute: t.exposeFloat("pagesPerMinute", { description: `Pages reported per minute over the last ${RATE_WINDOW_MINUTES} minutes.` }),
  }),
});

const sourceDay = z.object({ source: sourceId, date: z.iso.date().nullish() });
const activityArgs = z.object({ source: sourceId, minutes: z.number().int().min(1).max(MAX_ACTIVITY_MINUTES) });
const crawlersArgs = z.object({ source: sourceId.nullish() });

async function existingSource(ctx: Context, id: string) {
  if (!(await ctx.db.source.findUnique({ where: { id }, select: { id: true } }))) throw notFound(`source "${id}" does not exist`);
  return id;
}

builder.queryFields((t) => ({
  viewer: t.field({
    type: ViewerRef,
    // Open even where reads need a token: the dashboard asks it to learn whether it must sign in.
    skipTypeScopes: true,
    description: "The caller's role, so a client can offer only what it may do.",
    resolve: (_root, _args, ctx) => ({ principal: ctx.principal }),
  }),
  crawlDay: t.field({
    type: CrawlDayRef,
    resolve: (_root, _args, ctx) => {
      const date = ctx.calendar.today();
      return { date, startsAt: ctx.calendar.startOf(date), timeZone: ctx.config.CRAWL_TZ };
    },
  }),
  transitionCounts: t.field({
    type: [TransitionCountRef],
    description: "Transitions per (from, to) of a source on a crawl day (default: today), from the CrawlEvent log.",
    args: { source: t.arg.id({ required: true }), date: t.arg({ type: "Date" }) },
    resolve: async (_root, args, ctx) => {
      const a = parseInput(sourceDay, args);
      return ctx.activity.transitionCounts(await existingSource(ctx, a.source), a.date ?? ctx.calendar.today());
    },
  }),
  pageActivity: t.field({
    type: [ActivityPointRef],
    description: `Pages reported and jobs found per minute over the last \`minutes\` (at most ${MAX_ACTIVITY_MINUTES}), oldest first.`,
    args: { source: t.arg.id({ required: true }), minutes: t.arg.int({ defaultValue: 180 }) },
    resolve: async (_root, args, ctx) => {
      const a = parseInput(activityArgs, { ...args, minutes: args.minutes ?? 180 });
      return ctx.activity.pageActivity(await existingSource(ctx, a.source), a.minutes);
    },
  }),
  completionSeries: t.field({
    type: [CompletionPointRef],
    description: "Keywords completed over a crawl day (default: today), cumulative, one point per minute in which it moved.",
    args: { source: t.arg.id({ required: true }), date: t.arg({ type: "Date" }) },
    resolve: async (_root, args, ctx) => {
      const a = parseInput(sourceDay, args);
      return ctx.activity.completionSeries(await existingSource(ctx, a.source), a.date ?? ctx.calendar.today());
    },
  }),
  crawlers: t.field({
    type: [CrawlerRef],
    description: "Crawlers seen today (of one source, or all), most recently active first.",
    args: { source: t.arg.id() },
    resolve: async (_root, args, ctx) => {
      const { source } = parseInput(crawlersArgs, args);
      const ids = source
        ? [await existingSource(ctx, source)]
        : (await ctx.db.source.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map((s) => s.id);
      return ctx.activity.crawlers(ids);
    },
  }),
}));
