-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('SPIDER', 'ADMIN', 'VIEWER');

-- CreateEnum
CREATE TYPE "CrawlStatus" AS ENUM ('IDLE', 'CRAWLING', 'COMPLETED', 'FAILED', 'PARTIAL');

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Source" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "maxPages" INTEGER NOT NULL,
    "maxRetries" INTEGER NOT NULL DEFAULT 3,
    "staleAfterSeconds" INTEGER NOT NULL DEFAULT 1800,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "keywordCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Source_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Keyword" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "city" TEXT NOT NULL,
    "job" TEXT NOT NULL,
    "status" "CrawlStatus" NOT NULL DEFAULT 'IDLE',
    "crawlDate" TEXT,
    "lastRequestedAt" TIMESTAMP(3),
    "lastCompletedPage" INTEGER NOT NULL DEFAULT 0,
    "totalPages" INTEGER NOT NULL DEFAULT 0,
    "jobsFound" INTEGER NOT NULL DEFAULT 0,
    "pagesCrawled" INTEGER NOT NULL DEFAULT 0,
    "crawlStartedAt" TIMESTAMP(3),
    "heartbeatAt" TIMESTAMP(3),
    "crawlerId" TEXT NOT NULL DEFAULT '',
    "errorMessage" TEXT NOT NULL DEFAULT '',
    "retryCount" INTEGER NOT NULL DEFAULT 0,
    "leaseToken" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Keyword_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PageReport" (
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "page" INTEGER NOT NULL,
    "jobsFound" INTEGER NOT NULL,
    "crawlerId" TEXT NOT NULL,
    "reportedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PageReport_pkey" PRIMARY KEY ("keywordId","crawlDate","page")
);

-- CreateTable
CREATE TABLE "CrawlEvent" (
    "id" SERIAL NOT NULL,
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "from" "CrawlStatus" NOT NULL,
    "to" "CrawlStatus" NOT NULL,
    "reason" TEXT NOT NULL,
    "crawlerId" TEXT NOT NULL DEFAULT '',
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CrawlEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CrawlCounter" (
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "status" "CrawlStatus" NOT NULL,
    "shard" INTEGER NOT NULL,
    "keywords" INTEGER NOT NULL DEFAULT 0,
    "jobsFound" INTEGER NOT NULL DEFAULT 0,
    "pagesCrawled" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "CrawlCounter_pkey" PRIMARY KEY ("sourceId","crawlDate","status","shard")
);

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- CreateIndex
CREATE INDEX "Keyword_sourceId_status_crawlDate_lastRequestedAt_id_idx" ON "Keyword"("sourceId", "status", "crawlDate", "lastRequestedAt", "id");

-- CreateIndex
CREATE INDEX "Keyword_sourceId_lastRequestedAt_id_idx" ON "Keyword"("sourceId", "lastRequestedAt", "id");

-- CreateIndex
CREATE INDEX "Keyword_sourceId_crawlDate_status_idx" ON "Keyword"("sourceId", "crawlDate", "status");

-- CreateIndex
CREATE INDEX "Keyword_status_heartbeatAt_idx" ON "Keyword"("status", "heartbeatAt");

-- CreateIndex
CREATE UNIQUE INDEX "Keyword_sourceId_city_job_key" ON "Keyword"("sourceId", "city", "job");

-- CreateIndex
CREATE INDEX "PageReport_sourceId_crawlDate_reportedAt_idx" ON "PageReport"("sourceId", "crawlDate", "reportedAt");

-- CreateIndex
CREATE INDEX "CrawlEvent_keywordId_id_idx" ON "CrawlEvent"("keywordId", "id");

-- CreateIndex
CREATE INDEX "CrawlEvent_sourceId_crawlDate_from_to_idx" ON "CrawlEvent"("sourceId", "crawlDate", "from", "to");

-- AddForeignKey
ALTER TABLE "Keyword" ADD CONSTRAINT "Keyword_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PageReport" ADD CONSTRAINT "PageReport_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PageReport" ADD CONSTRAINT "PageReport_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CrawlEvent" ADD CONSTRAINT "CrawlEvent_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CrawlEvent" ADD CONSTRAINT "CrawlEvent_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CrawlCounter" ADD CONSTRAINT "CrawlCounter_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

