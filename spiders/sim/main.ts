// `npm run sim`: the job-board simulator on SIM_PORT (default 4100).
import { pino } from "pino";
import { createSimServer } from "./server.ts";
import { createUpstreamHandler, UpstreamSim } from "./upstream/server.ts";

const log = pino({ level: process.env.LOG_LEVEL ?? "info" });
const port = Number(process.env.SIM_PORT ?? 4100);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`Invalid configuration:\nSIM_PORT="${process.env.SIM_PORT}": must be a port number`);
  process.exit(2);
}
const growMs = Number(process.env.UPSTREAM_GROW_MS ?? 10_000);
if (!Number.isInteger(growMs) || growMs < 0) {
  console.error(`Invalid configuration:\nUPSTREAM_GROW_MS="${process.env.UPSTREAM_GROW_MS}": must be a whole number of milliseconds (0 = never)`);
  process.exit(2);
}
let sim;
try {
  // Beside the job boards: the collector's upstream API at /upstream (it grows every UPSTREAM_GROW_MS).
  const upstream = createUpstreamHandler(new UpstreamSim({ growEveryMs: growMs }), "/upstream");
  sim = createSimServer({ mounts: [{ prefix: "/upstream", handler: (req, res, body) => void upstream(req, res, body) }] });
} catch (e) {
  // A bad SIM_FAULTS_<SITE> value.
  console.error(`Invalid configuration:\n  ${(e as Error).message}`);
  process.exit(2);
}
const bound = await sim.start(port, process.env.SIM_HOST ?? "127.0.0.1");
log.info({ port: bound, seed: sim.seed, sites: ["/boss", "/qcwy", "/zhilian"], upstream: "/upstream" }, "simulator listening");
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => void sim.stop().then(() => process.exit(0)));
}
