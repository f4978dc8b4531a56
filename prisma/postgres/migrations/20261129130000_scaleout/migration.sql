-- CreateTable
CREATE TABLE "JobTick" (
    "job" TEXT NOT NULL,
    "tick" TIMESTAMP(3) NOT NULL,
    "instance" TEXT NOT NULL,
    "claimedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JobTick_pkey" PRIMARY KEY ("job","tick")
);

