-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_CrawlCounter" (
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "shard" INTEGER NOT NULL,
    "keywords" INTEGER NOT NULL DEFAULT 0,
    "jobsFound" INTEGER NOT NULL DEFAULT 0,
    "pagesCrawled" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("sourceId", "crawlDate", "status", "shard")
);
INSERT INTO "new_CrawlCounter" ("crawlDate", "jobsFound", "keywords", "pagesCrawled", "shard", "sourceId", "status") SELECT "crawlDate", "jobsFound", "keywords", "pagesCrawled", "shard", "sourceId", "status" FROM "CrawlCounter";
DROP TABLE "CrawlCounter";
ALTER TABLE "new_CrawlCounter" RENAME TO "CrawlCounter";
CREATE TABLE "new_CrawlEvent" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "from" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "crawlerId" TEXT NOT NULL DEFAULT '',
    "at" DATETIME NOT NULL,
    CONSTRAINT "CrawlEvent_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_CrawlEvent" ("at", "crawlDate", "crawlerId", "from", "id", "keywordId", "reason", "sourceId", "to") SELECT "at", "crawlDate", "crawlerId", "from", "id", "keywordId", "reason", "sourceId", "to" FROM "CrawlEvent";
DROP TABLE "CrawlEvent";
ALTER TABLE "new_CrawlEvent" RENAME TO "CrawlEvent";
CREATE INDEX "CrawlEvent_keywordId_id_idx" ON "CrawlEvent"("keywordId", "id");
CREATE INDEX "CrawlEvent_sourceId_crawlDate_from_to_idx" ON "CrawlEvent"("sourceId", "crawlDate", "from", "to");
CREATE TABLE "new_PageReport" (
    "keywordId" INTEGER NOT NULL,
    "sourceId" TEXT NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "page" INTEGER NOT NULL,
    "jobsFound" INTEGER NOT NULL,
    "crawlerId" TEXT NOT NULL,
    "reportedAt" DATETIME NOT NULL,

    PRIMARY KEY ("keywordId", "crawlDate", "page"),
    CONSTRAINT "PageReport_keywordId_fkey" FOREIGN KEY ("keywordId") REFERENCES "Keyword" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_PageReport" ("crawlDate", "crawlerId", "jobsFound", "keywordId", "page", "reportedAt", "sourceId") SELECT "crawlDate", "crawlerId", "jobsFound", "keywordId", "page", "reportedAt", "sourceId" FROM "PageReport";
DROP TABLE "PageReport";
ALTER TABLE "new_PageReport" RENAME TO "PageReport";
CREATE INDEX "PageReport_sourceId_crawlDate_reportedAt_idx" ON "PageReport"("sourceId", "crawlDate", "reportedAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

