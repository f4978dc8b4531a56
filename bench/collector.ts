// npm run bench:collector [-- --records 50000] [--batch 500] [--db sqlite|postgres] [--quick]
//
// Records/s through the incremental collector (upstream HTTP fetch → freshness filter → sink →
// coverage commit, in the real server) next to the raw upstream fetch rate measured in the same run
// (the same batches fetched over HTTP and parsed, nothing else): the ratio is the collector's
// overhead. Every record is fresh, so every record reaches the sink. Sinks: DATABASE, and NATS
// JetStream when it answers at NATS_URL (default nats://127.0.0.1:4222), also next to the raw
// JetStream publish rate of as many keyed messages. The upstream simulator runs in this process,
// for every measurement alike. Never asserts a speed.
import { performance } from "node:perf_hooks";
import { Command, InvalidArgumentError } from "commander";
import { pino } from "pino";
import { jetstream } from "@nats-io/jetstream";
import { CollectorStatus } from "../generated/sqlite/enums.ts";
import { buildApp } from "../server/src/app.ts";
import { createTestDatabase } from "../server/test/databases.ts";
import { natsUnavailable, NATS_URL, testBroker } from "../server/test/nats.ts";
import { startUpstreamSim } from "../spiders/sim/upstream/server.ts";

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};
const opts = new Command("bench:collector")
  .option("--quick", "a small, fast run (used by the test suite)")
  .option("--records <n>", "upstream records", int)
  .option("--batch <n>", "batch size (≤ 1000)", int, 500)
  .option("--db <provider>", "sqlite or postgres", "sqlite")
  .parse()
  .opts<{ quick?: boolean; records?: number; batch: number; db: string }>();
if (opts.db !== "sqlite" && opts.db !== "postgres") throw new InvalidArgumentError("--db must be sqlite or postgres");
const RECORDS = opts.records ?? (opts.quick ? 2_000 : 50_000);
const BATCH = Math.min(opts.batch, 1000);
const today = new Date().toISOString().slice(0, 10);

interface Row {
  what: string;
  records: number;
  seconds: number;
  perSecond: number;
}
const rows: Row[] = [];
const record = (what: string, records: number, t0: number) => {
  const seconds = (performance.now() - t0) / 1000;
  const row = { what, records, seconds, perSecond: records / seconds };
  rows.push(row);
  return row;
};

const upstream = await startUpstreamSim({ initial: RECORDS, endDay: today, spanDays: 30, seed: 1 });

/** The floor: the same batches, newest first, fetched and parsed, nothing more. */
async function rawFetch() {
  const t0 = performance.now();
  let n = 0;
  for (let hi = RECORDS; hi > 0; hi -= BATCH) {
    const lo = Math.max(0, hi - BATCH);
    const r = await fetch(`${upstream.url}?offset=${lo}&limit=${hi - lo}`);
    const body = (await r.json()) as { data: { data: unknown[] } };
    n += body.data.data.length;
  }
  return record(`raw upstream fetch (HTTP, batch ${BATCH})`, n, t0);
}

/** One first run of a task over the whole upstream, every record fresh. */
async function collector(sink: "DATABASE" | "NATS", stream?: string) {
  const db = await createTestDatabase(opts.db as "sqlite" | "postgres");
  const app = await buildApp({
    config: { DATABASE_URL: db.url, NATS_URL, LOG_LEVEL: "silent" },
    logger: pino({ level: "silent" }),
    scheduler: false,
  });
  try {
    const { collector } = app.services;
    const task = await collector.create({
      name: `bench-${sink}`,
      url: upstream.url,
      idField: "id",
      enabled: true,
      autoStart: false,
      batchSize: BATCH,
      filterDays: 365,
      maxExpiredBatches: 0,
      schedule: "",
      sink,
      stream: stream ?? "",
    });
    const t0 = performance.now();
    await collector.start(task.id);
    let done = await collector.store.find(task.id);
    while (done?.status === CollectorStatus.RUNNING) {
      await new Promise((r) => setTimeout(r, 5));
      done = await collector.store.find(task.id);
    }
    if (done?.status !== CollectorStatus.COMPLETED || done.producedCount !== RECORDS) {
      throw new Error(`collector run ended ${done?.status} with ${done?.producedCount}/${RECORDS}: ${done?.lastError}`);
    }
    return record(`collector → ${sink === "NATS" ? "NATS JetStream" : `DATABASE (${db.provider})`}`, done.producedCount, t0);
  } finally {
    await app.stop();
    await db.drop();
  }
}

/** The NATS floor: the same number of keyed messages published in the same batches, nothing more. */
async function rawPublish(broker: Awaited<ReturnType<typeof testBroker>>) {
  const stream = broker.streamName();
  await broker.jsm.streams.add({ name: stream, subjects: [`${stream}.records`] });
  const js = jetstream(broker.nc);
  const payload = JSON.stringify(upstream.sim.dataset.record(0));
  const t0 = performance.now();
  for (let hi = RECORDS; hi > 0; hi -= BATCH) {
    const keys = Array.from({ length: hi - Math.max(0, hi - BATCH) }, (_, i) => `k${hi - i}`);
    await Promise.all(keys.map((k) => js.publish(`${stream}.records`, payload, { msgID: k })));
  }
  return record(`raw JetStream publish (batch ${BATCH}, keyed)`, RECORDS, t0);
}

const raw = await rawFetch();
const measured = [await collector("DATABASE")];
const natsWhy = await natsUnavailable();
let natsFloor: Row | undefined;
if (!natsWhy) {
  const broker = await testBroker();
  try {
    natsFloor = await rawPublish(broker);
    measured.push(await collector("NATS", broker.streamName()));
  } finally {
    await broker.close();
  }
} else console.warn(`[skip] NATS sink not measured: ${natsWhy}`);
await upstream.close();

console.log(`\n${RECORDS} records, batch ${BATCH}, Node ${process.version}${opts.quick ? " (quick)" : ""}\n`);
console.log("| measurement | records | seconds | records/s |\n|---|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.what} | ${r.records} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} |`);
console.log("\n| ratio | value |\n|---|---:|");
for (const m of measured) console.log(`| ${m.what} vs raw fetch | ${(m.perSecond / raw.perSecond).toFixed(3)}× |`);
if (natsFloor) console.log(`| collector → NATS JetStream vs raw JetStream publish | ${(measured.at(-1)!.perSecond / natsFloor.perSecond).toFixed(3)}× |`);
