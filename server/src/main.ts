// npm start: read settings, migrate, serve. Stops cleanly on SIGINT/SIGTERM.
import { buildApp } from "./app.ts";
import { loadDotEnv, parseConfig } from "./config.ts";
import { createLogger } from "./log.ts";

loadDotEnv();
let config;
try {
  config = parseConfig();
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
const log = createLogger(config.LOG_LEVEL);
const app = await buildApp({ config, logger: log });
await app.start(config.PORT, config.HOST);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping");
    await app.stop();
    process.exit(0);
  });
}
