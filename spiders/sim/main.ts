// `npm run sim`: the job-board simulator on SIM_PORT (default 4100).
import { pino } from "pino";
import { createSimServer } from "./server.ts";

const log = pino({ level: process.env.LOG_LEVEL ?? "info" });
const port = Number(process.env.SIM_PORT ?? 4100);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`Invalid configuration:\nSIM_PORT="${process.env.SIM_PORT}": must be a port number`);
  process.exit(2);
}
let sim;
try {
  sim = createSimServer();
} catch (e) {
  // A bad SIM_FAULTS_<SITE> value.
  console.error(`Invalid configuration:\n  ${(e as Error).message}`);
  process.exit(2);
}
const bound = await sim.start(port, process.env.SIM_HOST ?? "127.0.0.1");
log.info({ port: bound, seed: sim.seed, sites: ["/boss", "/qcwy", "/zhilian"] }, "simulator listening");
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => void sim.stop().then(() => process.exit(0)));
}
