-- CrawlEvent ids past 2^31: the column and its sequence become 64-bit. (Prisma's own diff renders
-- this as `SET DATA TYPE BIGSERIAL`, which PostgreSQL refuses.) The table is rewritten once, under
-- an exclusive lock: on a large log, run it in a quiet moment.
ALTER TABLE "CrawlEvent" ALTER COLUMN "id" SET DATA TYPE BIGINT;
ALTER SEQUENCE "CrawlEvent_id_seq" AS BIGINT;
