// The NATS sink: JetStream, one stream per task (subject `<stream>.records`). Each record is a
// message whose id (Nats-Msg-Id) is the record key, so JetStream drops a replayed record within the
// stream's duplicate window. One connection (lazy, reconnecting) serves every task.
import { connect } from "@nats-io/transport-node";
import { headers, nanos, type NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from "@nats-io/jetstream";
import type { UpstreamRecord } from "../upstream/upstream.ts";
import { type ConsumerLag, type Sink, type SinkLag, SinkUnavailableError } from "./sink.ts";

/** How long JetStream remembers message ids of a stream we create (replays within it are dropped). */
const DUPLICATE_WINDOW_MS = 24 * 3600_000;
/** How long the first connection attempt may take before the sink is reported unavailable. */
const CONNECT_TIMEOUT_MS = 2_000;

export const subjectOf = (stream: string) => `${stream}.records`;

export class NatsBroker {
  private conn: Promise<NatsConnection> | undefined;

  constructor(readonly url: string) {}

  async connection(): Promise<NatsConnection> {
    const existing = await this.conn?.catch(() => undefined);
    if (existing && !existing.isClosed()) return existing;
    this.conn = connect({
      servers: this.url,
      name: "crawl-control-plane collector",
      timeout: CONNECT_TIMEOUT_MS,
      // Once connected, ride out broker restarts: publishes in the meantime fail and are retried.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
    });
    try {
      return await this.conn;
    } catch (e) {
      this.conn = undefined;
      throw new SinkUnavailableError(`NATS is not reachable at ${this.url}: ${(e as Error).message}`);
    }
  }

  async close(): Promise<void> {
    const nc = await this.conn?.catch(() => undefined);
    this.conn = undefined;
    // Every publish has been awaited by now; close() cannot hang on a broker that is down.
    if (nc && !nc.isClosed()) await nc.close();
  }
}

export class NatsSink implements Sink {
  readonly target: string;
  private readonly subject: string;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly taskId: number,
  ) {
    this.subject = subjectOf(stream);
    this.target = `JetStream stream ${stream}, subject ${this.subject}`;
  }

  /** Connect and make sure the stream exists (if `create`, made with a 24 h duplicate window when missing). */
  static async open(broker: NatsBroker, stream: string, taskId: number, create = true): Promise<NatsSink> {
    const nc = await broker.connection();
    try {
      const jsm = await jetstreamManager(nc);
      try {
        await jsm.streams.info(stream);
      } catch (e) {
        if (!(e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound)) throw e;
        if (!create) throw new SinkUnavailableError(`JetStream stream ${stream} does not exist yet (created by the first run)`);
        await jsm.streams.add({ name: stream, subjects: [subjectOf(stream)], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
      }
      return new NatsSink(nc, jsm, stream, taskId);
    } catch (e) {
      if (e instanceof SinkUnavailableError) throw e;
      throw new SinkUnavailableError(`JetStream stream ${stream} is not usable on ${broker.url}: ${(e as Error).message}`);
    }
  }

  async publish(records: UpstreamRecord[]) {
    const js = jetstream(this.nc);
    // Sent back to back on one connection, so they are stored in this order; then all acks awaited.
    const acks = await Promise.all(
      records.map((r) => {
        const h = headers();
        h.set("Collector-Task", String(this.taskId));
        h.set("Collector-Offset", String(r.offset));
        return js.publish(this.subject, JSON.stringify(r.data), { msgID: r.key, headers: h });
      }),
    );
    const duplicates = acks.filter((a) => a.duplicate).length;
    return { added: acks.length - duplicates, duplicates };
  }

  async lag(): Promise<SinkLag> {
    const info = await this.jsm.streams.info(this.stream);
    const consumers: ConsumerLag[] = [];
    for await (const c of this.jsm.consumers.list(this.stream)) {
      consumers.push({ name: c.name, pending: c.num_pending, ackPending: c.num_ack_pending });
    }
    const pending = consumers.length ? Math.max(...consumers.map((c) => c.pending + c.ackPending)) : null;
    return { messages: info.state.messages, pending, consumers };
  }
}
