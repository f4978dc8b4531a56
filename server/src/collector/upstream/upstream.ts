// What the collector needs from an upstream: its current total, and a page of records by offset,
// oldest first. Each adapter maps its own record shape to UpstreamRecord, so the run, the
// freshness filter and the sinks never see a source-specific field.

export interface UpstreamRecord {
  /** Position in the upstream, 0 = oldest. */
  offset: number;
  /** Unique key: the message id downstream, so replays deduplicate. */
  key: string;
  /** The day (YYYY-MM-DD) freshness is judged by: publish day, else collect day; null = undated. */
  day: string | null;
  /** The record as the upstream sent it. */
  data: Record<string, unknown>;
}

export interface UpstreamPage {
  total: number;
  records: UpstreamRecord[];
}

export interface Upstream {
  total(signal?: AbortSignal): Promise<number>;
  /** Records [offset, offset + limit) clipped to the total; an error when the page is short. */
  fetch(offset: number, limit: number, signal?: AbortSignal): Promise<UpstreamPage>;
}

/** An upstream failure worth retrying (network, 5xx, a short page) vs one that is not (4xx, bad JSON shape). */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}
