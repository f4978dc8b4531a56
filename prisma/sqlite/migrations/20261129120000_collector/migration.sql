-- CreateTable
CREATE TABLE "CollectorTask" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "idField" TEXT NOT NULL DEFAULT 'id',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "autoStart" BOOLEAN NOT NULL DEFAULT false,
    "batchSize" INTEGER NOT NULL DEFAULT 100,
    "filterDays" INTEGER NOT NULL DEFAULT 7,
    "maxExpiredBatches" INTEGER NOT NULL DEFAULT 3,
    "schedule" TEXT,
    "sink" TEXT NOT NULL DEFAULT 'DATABASE',
    "stream" TEXT,
    "status" TEXT NOT NULL DEFAULT 'IDLE',
    "total" INTEGER NOT NULL DEFAULT 0,
    "coveredRanges" TEXT NOT NULL DEFAULT '[]',
    "filteredCount" INTEGER NOT NULL DEFAULT 0,
    "producedCount" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT NOT NULL DEFAULT '',
    "lastUpdate" DATETIME,
    "runId" INTEGER,
    "stopRequested" BOOLEAN NOT NULL DEFAULT false,
    "heartbeatAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "CollectorRun" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "taskId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "startedAt" DATETIME NOT NULL,
    "finishedAt" DATETIME,
    "total" INTEGER NOT NULL DEFAULT 0,
    "batches" INTEGER NOT NULL DEFAULT 0,
    "fetchedCount" INTEGER NOT NULL DEFAULT 0,
    "filteredCount" INTEGER NOT NULL DEFAULT 0,
    "producedCount" INTEGER NOT NULL DEFAULT 0,
    "duplicateCount" INTEGER NOT NULL DEFAULT 0,
    "expiredBatches" INTEGER NOT NULL DEFAULT 0,
    "staleBelow" INTEGER,
    "error" TEXT NOT NULL DEFAULT '',
    CONSTRAINT "CollectorRun_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "CollectorTask" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CollectorRecord" (
    "taskId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    "data" TEXT NOT NULL,
    "collectedAt" DATETIME NOT NULL,

    PRIMARY KEY ("taskId", "key"),
    CONSTRAINT "CollectorRecord_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "CollectorTask" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "CollectorTask_name_key" ON "CollectorTask"("name");

-- CreateIndex
CREATE INDEX "CollectorRun_taskId_id_idx" ON "CollectorRun"("taskId", "id");

