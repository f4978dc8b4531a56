-- CreateTable
CREATE TABLE "ApiToken" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" DATETIME,
    "revokedAt" DATETIME
);

-- CreateTable
CREATE TABLE "Source" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "maxPages" INTEGER NOT NULL,
    "maxRetries" INTEGER NOT NULL DEFAULT 3,
    "staleAfterSeconds" INTEGER NOT NULL DEFAULT 1800,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "keywordCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Keyword" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sourceId" TEXT NOT NULL,
    "city" TEXT NOT NULL,
    "job" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'IDLE',
    "crawlDate" TEXT,
    "lastRequestedAt" DATETIME,
    "lastCompletedPage" INTEGER NOT NULL DEFAULT 0,
    "totalPages" INTEGER NOT NULL DEFAULT 0,
    "jobsFound" INTEGER NOT NULL DEFAULT 0,
    "pagesCrawled" INTEGER NOT NULL DEFAULT 0,
    "crawlStartedAt" DATETIME,
    "heartbeatAt" DATETIME,
    "crawlerId" TEXT NOT NULL DEFAULT '',
    "errorMessage" TEXT NOT NULL DEFAULT '',
    "retryCount" INTEGER NOT NULL DEFAULT 0,
    "leaseToken" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Keyword_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PageReport" (
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "page" INTEGER NOT NULL,
    "jobsFound" INTEGER NOT NULL,
    "crawlerId" TEXT NOT NULL,
    "reportedAt" DATETIME NOT NULL,

    PRIMARY KEY ("keywordId", "crawlDate", "page"),
    CONSTRAINT "PageReport_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "PageReport_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CrawlEvent" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "from" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "crawlerId" TEXT NOT NULL DEFAULT '',
    "at" DATETIME NOT NULL,
    CONSTRAINT "CrawlEvent_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "CrawlEvent_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CrawlCounter" (
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "shard" INTEGER NOT NULL,
    "keywords" INTEGER NOT NULL DEFAULT 0,
    "jobsFound" INTEGER NOT NULL DEFAULT 0,
    "pagesCrawled" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("sourceId", "crawlDate", "status", "shard"),
    CONSTRAINT "CrawlCounter_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
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

