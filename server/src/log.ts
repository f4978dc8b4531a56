// Structured logs (pino): JSON lines, one logger for the process, children per role.
import pino, { type Logger } from "pino";

export function createLogger(level: string, name = "crawl-control-plane"): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}

export type { Logger };
