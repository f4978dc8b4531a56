-- CreateEnum
CREATE TYPE "CollectorSink" AS ENUM ('DATABASE', 'NATS', 'KAFKA');

-- CreateEnum
CREATE TYPE "CollectorStatus" AS ENUM ('IDLE', 'RUNNING', 'COMPLETED', 'STOPPED', 'ERROR');

-- CreateTable
CREATE TABLE "CollectorTask" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "idField" TEXT NOT NULL DEFAULT 'id',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "autoStart" BOOLEAN NOT NULL DEFAULT false,
    "batchSize" INTEGER NOT NULL DEFAULT 100,
    "filterDays" INTEGER NOT NULL DEFAULT 7,
    "maxExpiredBatches" INTEGER NOT NULL DEFAULT 3,
    "schedule" TEXT,
    "sink" "CollectorSink" NOT NULL DEFAULT 'DATABASE',
    "stream" TEXT,
    "status" "CollectorStatus" NOT NULL DEFAULT 'IDLE',
    "total" INTEGER NOT NULL DEFAULT 0,
    "coveredRanges" TEXT NOT NULL DEFAULT '[]',
    "filteredCount" INTEGER NOT NULL DEFAULT 0,
    "producedCount" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT NOT NULL DEFAULT '',
    "lastUpdate" TIMESTAMP(3),
    "runId" INTEGER,
    "stopRequested" BOOLEAN NOT NULL DEFAULT false,
    "heartbeatAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CollectorTask_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CollectorRun" (
    "id" SERIAL NOT NULL,
    "taskId" INTEGER NOT NULL,
    "status" "CollectorStatus" NOT NULL,
    "trigger" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),
    "total" INTEGER NOT NULL DEFAULT 0,
    "batches" INTEGER NOT NULL DEFAULT 0,
    "fetchedCount" INTEGER NOT NULL DEFAULT 0,
    "filteredCount" INTEGER NOT NULL DEFAULT 0,
    "producedCount" INTEGER NOT NULL DEFAULT 0,
    "duplicateCount" INTEGER NOT NULL DEFAULT 0,
    "expiredBatches" INTEGER NOT NULL DEFAULT 0,
    "staleBelow" INTEGER,
    "error" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "CollectorRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CollectorRecord" (
    "taskId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    "data" TEXT NOT NULL,
    "collectedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CollectorRecord_pkey" PRIMARY KEY ("taskId","key")
);

-- CreateIndex
CREATE UNIQUE INDEX "CollectorTask_name_key" ON "CollectorTask"("name");

-- CreateIndex
CREATE INDEX "CollectorRun_taskId_id_idx" ON "CollectorRun"("taskId", "id");

-- AddForeignKey
ALTER TABLE "CollectorRun" ADD CONSTRAINT "CollectorRun_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "CollectorTask"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CollectorRecord" ADD CONSTRAINT "CollectorRecord_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "CollectorTask"("id") ON DELETE CASCADE ON UPDATE CASCADE;

