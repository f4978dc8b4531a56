// The NATS JetStream the collector tests publish to: 127.0.0.1:4222 unless TEST_NATS_URL says
// otherwise. Without it those tests are skipped with a printed reason, except under CI=true,
// where a missing broker is a failure. Each test makes its own stream and deletes it.
import { randomBytes } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";

export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

let available: Promise<string | null> | undefined;
/** null when JetStream answers at NATS_URL, else why not. */
export function natsUnavailable(): Promise<string | null> {
  available ??= (async () => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: NATS_URL, timeout: 2000, maxReconnectAttempts: 0 });
      await (await jetstreamManager(nc)).getAccountInfo();
      return null;
    } catch (e) {
      return `NATS JetStream not reachable at ${NATS_URL} (${(e as Error).message})`;
    } finally {
      await nc?.close();
    }
  })();
  return available;
}

/** Whether to run the NATS tests; prints why not, and throws under CI=true. */
export async function natsAvailable(): Promise<boolean> {
  const why = await natsUnavailable();
  if (!why) return true;
  if (process.env.CI === "true") throw new Error(`CI=true but ${why}`);
  console.warn(`[skip] NATS JetStream collector tests skipped: ${why}`);
  return false;
}

export interface TestBroker {
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** A fresh stream name for this test (deleted by close). */
  streamName(): string;
  /** Every message of a stream in order: its key (Nats-Msg-Id) and upstream offset. */
  messages(stream: string): Promise<{ key: string; offset: number }[]>;
  close(): Promise<void>;
}

export async function testBroker(): Promise<TestBroker> {
  const nc = await connect({ servers: NATS_URL, timeout: 2000 });
  const jsm = await jetstreamManager(nc);
  const streams: string[] = [];
  return {
    nc,
    jsm,
    streamName() {
      const name = `TEST_COLLECTOR_${randomBytes(5).toString("hex").toUpperCase()}`;
      streams.push(name);
      return name;
    },
    async messages(stream) {
      const { state } = await jsm.streams.info(stream);
      const out: { key: string; offset: number }[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq });
        if (m) out.push({ key: m.header.get("Nats-Msg-Id"), offset: Number(m.header.get("Collector-Offset")) });
      }
      return out;
    },
    async close() {
      for (const s of streams) await jsm.streams.delete(s).catch(() => false);
      await nc.close();
    },
  };
}
