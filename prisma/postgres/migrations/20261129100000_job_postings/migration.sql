-- CreateTable
CREATE TABLE "JobPosting" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "company" TEXT NOT NULL DEFAULT '',
    "city" TEXT NOT NULL DEFAULT '',
    "salary" TEXT NOT NULL DEFAULT '',
    "url" TEXT NOT NULL DEFAULT '',
    "publishedAt" TIMESTAMP(3),
    "firstSeenAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "JobPosting_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PostingSighting" (
    "keywordId" INTEGER NOT NULL,
    "crawlDate" TEXT NOT NULL,
    "page" INTEGER NOT NULL,
    "postingId" INTEGER NOT NULL,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PostingSighting_pkey" PRIMARY KEY ("keywordId","crawlDate","page","postingId")
);

-- CreateIndex
CREATE INDEX "JobPosting_sourceId_city_id_idx" ON "JobPosting"("sourceId", "city", "id");

-- CreateIndex
CREATE UNIQUE INDEX "JobPosting_sourceId_externalId_key" ON "JobPosting"("sourceId", "externalId");

-- CreateIndex
CREATE INDEX "PostingSighting_postingId_idx" ON "PostingSighting"("postingId");

-- AddForeignKey
ALTER TABLE "PostingSighting" ADD CONSTRAINT "PostingSighting_postingId_fkey" FOREIGN KEY ("postingId") REFERENCES "JobPosting"("id") ON DELETE CASCADE ON UPDATE CASCADE;

