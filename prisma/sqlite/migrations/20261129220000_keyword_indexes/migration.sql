-- Fewer indexes on Keyword, the table every crawl event writes: stats read the maintained
-- counters (CrawlCounter), so (sourceId, crawlDate, status) served nothing; (status, heartbeatAt)
-- was rewritten by every page report's heartbeat. (status, crawlDate, id) serves keywords(status)
-- across sources in id order and the stale sweep, and changes only with the status.

-- DropIndex
DROP INDEX "Keyword_sourceId_crawlDate_status_idx";

-- DropIndex
DROP INDEX "Keyword_status_heartbeatAt_idx";

-- CreateIndex
CREATE INDEX "Keyword_status_crawlDate_id_idx" ON "Keyword"("status", "crawlDate", "id");
