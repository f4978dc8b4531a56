-- CreateTable
CREATE TABLE "JobPosting" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sourceId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "company" TEXT NOT NULL DEFAULT '',
    "city" TEXT NOT NULL DEFAULT '',
    "salary" TEXT NOT NULL DEFAULT '',
    "url" TEXT NOT NULL DEFAULT '',
    "publishedAt" DATETIME,
    "firstSeenAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "PostingSighting" (
    "keywordId" INTEGER NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "page" INTEGER NOT NULL,
    "postingId" INTEGER NOT NULL,
    "seenAt" DATETIME NOT NULL,

    PRIMARY KEY ("keywordId", "crawlDate", "page", "postingId"),
    CONSTRAINT "PostingSighting_postingId_fkey" FOREIGN KEY ("postingId") REFERENCES "JobPosting" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "JobPosting_sourceId_city_id_idx" ON "JobPosting"("sourceId", "city", "id");

-- CreateIndex
CREATE UNIQUE INDEX "JobPosting_sourceId_externalId_key" ON "JobPosting"("sourceId", "externalId");

-- CreateIndex
CREATE INDEX "PostingSighting_postingId_idx" ON "PostingSighting"("postingId");

