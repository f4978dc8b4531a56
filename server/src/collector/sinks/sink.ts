// Where a task's fresh records go. Every sink is keyed: publishing a record whose key it already
// has stores nothing new, so a batch replayed after a crash leaves no duplicate downstream.
import type { UpstreamRecord } from "../upstream/upstream.ts";

export interface ConsumerLag {
  name: string;
  /** Messages the consumer has not been delivered yet. */
  pending: number;
  /** Delivered, not acknowledged. */
  ackPending: number;
}

export interface SinkLag {
  /** Records the sink holds. */
  messages: number;
  /** The furthest-behind consumer's pending + ackPending; null when the sink has no consumers. */
  pending: number | null;
  consumers: ConsumerLag[];
}

export interface Sink {
  /** Store every record (keyed by record.key); resolves once the sink has them. */
  publish(records: UpstreamRecord[]): Promise<{ added: number; duplicates: number }>;
  lag(): Promise<SinkLag>;
  /** A human description of where records go (stream and subject, table). */
  readonly target: string;
}

/** The sink cannot be used: unreachable broker, or a kind this build does not support. */
export class SinkUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SinkUnavailableError";
  }
}
