// Live progress on a terminal (cli-progress): one line per keyword in flight — page x/y, jobs,
// pages/s — under a total for the process. Off a terminal the spider logs JSON lines instead.
import cliProgress from "cli-progress";
import type { SpiderEvent, SpiderTotals } from "./spider.ts";

interface Row {
  bar: cliProgress.SingleBar;
  started: number;
  pages: number;
}

export class TtyProgress {
  private readonly multi: cliProgress.MultiBar;
  private readonly total: cliProgress.SingleBar;
  private readonly rows = new Map<string, Row>();
  private readonly started = Date.now();

  constructor(
    private readonly site: string,
    private readonly totals: SpiderTotals,
    private readonly maxPages: number,
  ) {
    this.multi = new cliProgress.MultiBar(
      {
        format: (options, params, payload) =>
          payload.summary
            ? payload.summary
            : `${String(payload.label).padEnd(24).slice(0, 24)} ${cliProgress.Format.BarFormat(params.progress, options)} page ${params.value}/${params.total || "?"} · jobs ${payload.jobs} · ${payload.rate} pages/s`,
        hideCursor: true,
        barsize: 20,
        clearOnComplete: false,
        stopOnComplete: false,
        autopadding: true,
      },
      cliProgress.Presets.shades_classic,
    );
    this.total = this.multi.create(1, 0, { summary: this.summary() });
  }

  private summary() {
    const t = this.totals;
    const secs = (Date.now() - this.started) / 1000;
    return `${this.site}: ${t.pages} pages · ${t.jobs} jobs · ${t.completed} completed · ${t.failed} failed · ${t.released} released · ${t.dropped} dropped · ${(t.pages / Math.max(secs, 1)).toFixed(1)} pages/s`;
  }

  /** A log line above the bars. */
  log(line: string) {
    this.multi.log(line.endsWith("\n") ? line : `${line}\n`);
  }

  onEvent(e: SpiderEvent) {
    if (e.type === "start") {
      const bar = this.multi.create(this.maxPages, e.startPage - 1, { label: e.label, jobs: 0, rate: "0.0" });
      this.rows.set(e.keywordId, { bar, started: Date.now(), pages: 0 });
    } else if (e.type === "page") {
      const row = this.rows.get(e.keywordId);
      if (row) {
        row.pages++;
        const rate = (row.pages / Math.max((Date.now() - row.started) / 1000, 0.001)).toFixed(1);
        if (e.lastPage) row.bar.setTotal(e.lastPage);
        row.bar.update(e.page, { label: e.label, jobs: e.jobs, rate });
      }
    } else {
      const row = this.rows.get(e.keywordId);
      if (row) this.multi.remove(row.bar);
      this.rows.delete(e.keywordId);
      if (e.outcome !== "COMPLETED") this.log(`${e.label}: ${e.outcome}${e.detail ? ` — ${e.detail}` : ""}`);
    }
    this.total.update(0, { summary: this.summary() });
  }

  stop() {
    this.total.update(0, { summary: this.summary() });
    this.multi.stop();
  }
}
