// Spiders SIGKILLed at random pages. Each trial: a spider process (`npm run spider -- qcwy --once`)
// crawls a fresh keyword of the job-board simulator and is SIGKILLed after a random page; its
// heartbeat goes stale and the real stale sweep turns the keyword PARTIAL; a second spider resumes
// at the next page and finishes. Survived when no page is lost, at most the page in flight is
// fetched twice, and jobsFound and the postings seen equal the simulator's truth.
import { ageHeartbeat } from "../../server/test/harness.ts";
import { pageCount } from "../../spiders/sim/data.ts";
import { SITE_ADAPTERS } from "../../spiders/src/sites/index.ts";
import { cityParam, expected, type Fleet, fetchesOf, keywordsOf, sightingsOf, spawnSpider, startFleet } from "../../spiders/test/fleet.ts";
import { Checks, type Scenario } from "../lib.ts";

const SEED = "chaos";
const CITY = "北京";

/** Jobs with at least `min` pages in the simulator, `lane` of `lanes` (each lane its own). */
function* longJobs(lane: number, lanes: number, min: number) {
  for (let i = lane; ; i += lanes) {
    const job = `岗位${i}`;
    if (pageCount(SEED, "qcwy", cityParam("qcwy", CITY), job, SITE_ADAPTERS.qcwy.pageSize) >= min) yield job;
  }
}

interface Trial {
  job: string;
  killedAfter: number;
  resumedAt?: number;
  exact: boolean;
  refetched: number;
  error?: string;
}

async function trial(fleet: Fleet, job: string, c: Checks): Promise<Trial> {
  const { server, sim } = fleet;
  const env = { apiUrl: server.app.url(), token: server.tokens.spider, simUrl: sim.url() };
  await server.importKeywords("qcwy", [CITY], [job]);
  const killAt = 2 + Math.floor(Math.random() * 20);
  const t: Trial = { job, killedAfter: killAt, exact: false, refetched: 0 };
  const failed = c.failed;
  const a = spawnSpider("qcwy", env, ["--once", "--concurrency", "1"]);
  try {
    await a.waitFor((l) => l.msg === "page done" && l.page === killAt);
  } finally {
    a.kill("SIGKILL");
  }
  c.equal((await a.exited).signal, "SIGKILL", `${job}: spider A killed`);
  const kw = (await keywordsOf(server, "qcwy")).find((k) => k.job === job)!;
  c.equal(kw.status, "CRAWLING", `${job}: CRAWLING after the kill`);
  c.ok(kw.lastCompletedPage >= killAt, `${job}: page ${killAt} recorded (lastCompletedPage ${kw.lastCompletedPage})`);
  // No heartbeat comes from a dead spider: staleAfterSeconds passes, the scheduled sweep runs.
  await ageHeartbeat(server, String(kw.id), 3600);
  await server.app.runJob("stale-sweep");
  const swept = (await keywordsOf(server, "qcwy")).find((k) => k.id === kw.id)!;
  c.equal(swept.status, "PARTIAL", `${job}: PARTIAL after the sweep`);

  const b = spawnSpider("qcwy", env, ["--once", "--concurrency", "1"]);
  const claimed = await b.waitFor((l) => l.msg === "claimed");
  t.resumedAt = claimed.startPage;
  c.ok(claimed.startPage === swept.lastCompletedPage + 1 && claimed.resumed === true, `${job}: resumed at ${claimed.startPage} (resumed=${claimed.resumed}), expected ${swept.lastCompletedPage + 1}`);
  c.equal((await b.exited).code, 0, `${job}: spider B exit status`);

  const done = (await keywordsOf(server, "qcwy")).find((k) => k.id === kw.id)!;
  const truth = expected(sim, "qcwy", CITY, job, 50);
  c.equal(done.status, "COMPLETED", `${job}: status`);
  c.equal(done.jobsFound, truth.jobs, `${job}: jobsFound`);
  c.equal(await sightingsOf(server, kw.id), truth.jobs, `${job}: postings seen`);
  const fetched = fetchesOf(sim.requests(), "qcwy", CITY, job);
  const lost = [];
  for (let p = 1; p <= Math.max(truth.pages, 1); p++) if (!fetched.get(p)) lost.push(p);
  c.equal(lost, [], `${job}: pages never fetched`);
  const twice = [...fetched].filter(([, n]) => n > 1);
  t.refetched = twice.length;
  c.ok(twice.length <= 1 && twice.every(([page, n]) => n === 2 && page === claimed.startPage), `${job}: re-fetched ${JSON.stringify(twice)} (only the page in flight, ${claimed.startPage}, may be)`);
  t.exact = c.failed === failed;
  return t;
}

export const spiderKill: Scenario = {
  name: "spider-kill",
  async run(ctx) {
    const c = new Checks();
    const total = ctx.trials ?? (ctx.quick ? 2 : 100);
    const lanes = Math.min(2, total);
    const trials: Trial[] = [];
    const bar = ctx.progress(total);
    let next = 0;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const fleet = await startFleet(ctx.db, SEED);
        fleet.sim.setFaults("qcwy", { latency: 15 }); // slow enough that a kill lands mid-keyword
        const jobs = longJobs(lane, lanes, 25);
        try {
          while (next < total) {
            next++;
            const job = jobs.next().value as string;
            try {
              trials.push(await trial(fleet, job, c));
            } catch (e) {
              c.ok(false, `${job}: ${(e as Error).message.split("\n")[0]}`);
              trials.push({ job, killedAfter: 0, exact: false, refetched: 0, error: (e as Error).message.split("\n")[0] });
            }
            bar.tick();
          }
        } finally {
          await fleet.close();
        }
      }),
    );
    bar.done();
    const exact = trials.filter((t) => t.exact).length;
    const refetched = trials.reduce((n, t) => n + t.refetched, 0);
    return {
      tried: `${total} spider processes SIGKILLed after a random page (2–21) of a 25+ page qcwy keyword; stale sweep; a second spider resumes (${ctx.db})`,
      survived: `${exact}/${total} exact (resumed at the next page, no page lost, jobsFound = truth); pages re-fetched: ${refetched} (the in-flight page)`,
      checks: c.count,
      failures: c.failures,
      details: { trials: total, exact, pagesRefetched: refetched, runs: trials },
    };
  },
};
