// The upstream simulator's data: a growing, deterministic list of job records. Record i is a pure
// function of (seed, i) and of the day it was appended, so two simulators with the same seed and the
// same appends serve the same records. Dates are spread over months, oldest first.

export interface UpstreamRecordData {
  id: string;
  title: string;
  company: string;
  city: string;
  salary: string;
  /** Publish date: `YYYY-MM-DD`, sometimes `YYYYMMDD`, sometimes empty (then Collect_time decides). */
  aae397: string;
  /** `YYYY-MM-DD HH:mm:ss` */
  Collect_time: string;
}

export interface DatasetOptions {
  /** PRNG seed; the same seed gives the same records. @default 1 */
  seed?: number;
  /** Records present at start. @default 10000 */
  initial?: number;
  /** Publish day of the newest initial record (`YYYY-MM-DD`). @default today (UTC) */
  endDay?: string;
  /** Days between the oldest and the newest initial record. @default 180 */
  spanDays?: number;
  /** Share of records without a publish date. @default 0.1 */
  missingDateRate?: number;
  /** Share of publish dates written `YYYYMMDD`. @default 0.2 */
  compactDateRate?: number;
}

const DAY = 86_400_000;
const TITLES = ["Java 开发", "前端工程师", "数据分析师", "产品经理", "运维工程师", "测试工程师", "算法工程师", "UI 设计师"];
const COMPANIES = ["星河科技", "蓝海数据", "云帆网络", "北辰软件", "东方智造", "南山信息"];
const CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安"];

/** mulberry32: a small seeded PRNG; `hash(seed, i)` gives record i its own stream. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hash = (seed: number, i: number) => Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(i + 1, 0xc2b2ae35);
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class Dataset {
  readonly seed: number;
  private readonly endMs: number;
  private readonly spanDays: number;
  private readonly initial: number;
  private readonly missingDateRate: number;
  private readonly compactDateRate: number;
  /** Publish day of every record appended after the initial ones, in order. */
  private readonly appendedDays: string[] = [];

  constructor(o: DatasetOptions = {}) {
    this.seed = o.seed ?? 1;
    this.initial = o.initial ?? 10_000;
    this.endMs = Date.parse(`${o.endDay ?? isoDay(Date.now())}T00:00:00Z`);
    this.spanDays = o.spanDays ?? 180;
    this.missingDateRate = o.missingDateRate ?? 0.1;
    this.compactDateRate = o.compactDateRate ?? 0.2;
    if (!Number.isFinite(this.endMs)) throw new Error(`endDay must be YYYY-MM-DD, got ${o.endDay}`);
  }

  get total(): number {
    return this.initial + this.appendedDays.length;
  }

  /** Append `n` records published on `day` (default: the newest initial day). Returns the new total. */
  append(n: number, day = isoDay(this.endMs)): number {
    for (let k = 0; k < n; k++) this.appendedDays.push(day);
    return this.total;
  }

  /** The publish day a record really has (whatever format or absence aae397 shows). */
  day(i: number): string {
    if (i >= this.initial) return this.appendedDays[i - this.initial]!;
    // Evenly spread over spanDays, with a day of jitter either way (so freshness is not monotone
    // in the offset near the cut-off, as in real data).
    const r = prng(hash(this.seed, i));
    const base = this.initial === 1 ? 0 : (i / (this.initial - 1)) * this.spanDays;
    const jitter = Math.floor(r() * 3) - 1;
    const daysAgo = Math.min(this.spanDays, Math.max(0, Math.round(this.spanDays - base) + jitter));
    return isoDay(this.endMs - daysAgo * DAY);
  }

  /** How record i is dated: its publish day, whether aae397 shows it, and the day it was collected. */
  private dating(i: number) {
    const r = prng(hash(this.seed, i) ^ 0x5bd1e995);
    const publishDay = this.day(i);
    const missing = r() < this.missingDateRate;
    const compact = r() < this.compactDateRate;
    // Collected 0–3 days after publication (never after the newest day), at a time of day from the PRNG.
    const publishMs = Date.parse(`${publishDay}T00:00:00Z`);
    const lagDays = i >= this.initial ? 0 : Math.floor(r() * 4);
    const collectMs = Math.max(publishMs, Math.min(publishMs + lagDays * DAY, this.endMs));
    const collectTime = new Date(collectMs + Math.floor(r() * 86_400) * 1000).toISOString().slice(0, 19).replace("T", " ");
    return { r, publishDay, missing, compact, collectTime };
  }

  /** The day freshness is judged by: the publish day when aae397 has it, else the collect day. */
  freshnessDay(i: number): string {
    const d = this.dating(i);
    return d.missing ? d.collectTime.slice(0, 10) : d.publishDay;
  }

  record(i: number): UpstreamRecordData {
    if (!Number.isInteger(i) || i < 0 || i >= this.total) throw new RangeError(`no record at offset ${i}`);
    const { r, publishDay, missing, compact, collectTime } = this.dating(i);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
    return {
      id: `s${this.seed}-${i}`,
      title: pick(TITLES),
      company: pick(COMPANIES),
      city: pick(CITIES),
      salary: `${5 + Math.floor(r() * 30)}k-${40 + Math.floor(r() * 20)}k`,
      aae397: missing ? "" : compact ? publishDay.replaceAll("-", "") : publishDay,
      Collect_time: collectTime,
    };
  }

  slice(offset: number, limit: number): UpstreamRecordData[] {
    const out: UpstreamRecordData[] = [];
    for (let i = offset; i < Math.min(this.total, offset + limit); i++) out.push(this.record(i));
    return out;
  }
}
