-- CreateTable
CREATE TABLE "JobTick" (
    "job" TEXT NOT NULL,
    "tick" DATETIME NOT NULL,
    "instance" TEXT NOT NULL,
    "claimedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("job", "tick")
);

