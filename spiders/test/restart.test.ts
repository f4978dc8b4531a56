// The server restarts in the middle of a crawl: the spider waits (retrying with backoff), reconnects
// to the new process and finishes the keyword, with no page lost and exact counts.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken, Role } from "../../server/src/auth/tokens.ts";
import type { Database } from "../../server/src/db/client.ts";
import { importKeywords } from "../../server/src/keywords/import.ts";
import { preparedTestDatabase, type TestDatabase, testProviders } from "../../server/test/databases.ts";
import { middayTimeZone } from "../../server/test/harness.ts";
import { spawnServer, type ServerProcess } from "../../server/test/process.ts";
import { pageCount } from "../sim/data.ts";
import { createSimServer, type Sim } from "../sim/server.ts";
import { cityParam, expected, fetchesOf, spawnSpider } from "./fleet.ts";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

describe.each(await testProviders())("server restart mid-crawl on %s", (provider) => {
  let tdb: TestDatabase;
  let db: Database;
  let sim: Sim;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase(provider));
    sim = createSimServer({ seed: "restart" });
    await sim.start(0);
  });
  afterAll(async () => {
    await server?.kill();
    await sim?.stop();
    await db?.close();
    await tdb?.drop();
  });

  it("the spider waits for the server, reconnects and finishes", async () => {
    let job = "";
    for (let i = 0; !job; i++) if (pageCount("restart", "qcwy", cityParam("qcwy", "上海"), `重启${i}`, 20) >= 30) job = `重启${i}`;
    await importKeywords(db, "qcwy", [["上海", job]]);
    const token = (await createToken(db, Role.SPIDER, "restart")).token;
    const env = { DATABASE_URL: tdb.url, CRAWL_TZ: middayTimeZone(), PORT: String(await freePort()), STALE_SWEEP_CRON: "0 0 0 1 1 *" };
    server = await spawnServer(env);
    sim.setFaults("qcwy", { latency: 20 });

    const spider = spawnSpider("qcwy", { apiUrl: server.url, token, simUrl: sim.url() }, ["--once"]);
    await spider.waitFor((l) => l.msg === "page done" && l.page === 5);
    await server.kill("SIGKILL");
    await spider.waitFor((l) => l.msg === "server call failed, retrying", 30_000);
    await new Promise((r) => setTimeout(r, 2_000)); // down for a while
    server = await spawnServer(env);

    expect((await spider.exited).code).toBe(0);
    const kw = await db.reader.keyword.findFirstOrThrow({ where: { sourceId: "qcwy", job } });
    const t = expected(sim, "qcwy", "上海", job, 50);
    expect(kw).toMatchObject({ status: "COMPLETED", jobsFound: t.jobs, lastCompletedPage: t.pages });
    expect(await db.reader.postingSighting.count({ where: { keywordId: kw.id } })).toBe(t.jobs);
    // No page lost, none fetched twice: the spider held its page until the server was back.
    const fetched = fetchesOf(sim.requests(), "qcwy", "上海", job);
    expect([...fetched.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: t.pages }, (_, i) => i + 1));
    expect([...fetched.values()].every((n) => n === 1)).toBe(true);
    expect(spider.lines.filter((l) => l.msg === "lease lost: keyword dropped")).toEqual([]);
  });
});
