-- DropForeignKey
ALTER TABLE "CrawlCounter" DROP CONSTRAINT "CrawlCounter_sourceId_fkey";

-- DropForeignKey
ALTER TABLE "CrawlEvent" DROP CONSTRAINT "CrawlEvent_sourceId_fkey";

-- DropForeignKey
ALTER TABLE "PageReport" DROP CONSTRAINT "PageReport_sourceId_fkey";

