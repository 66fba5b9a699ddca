import { defineBench } from './harness/bench.js';
import { allRunning, botsRunDirs, cpuPercentBoth, echoLatencies, pct, sleep } from './harness/bots-kit.js';
import type { Figure } from './harness/figure.js';
import { startPinbot } from './harness/pinbot-server.js';

const BOTS = 10_000;
const SENDERS = 100;
const IDLE_S = 15;
const GB = 1024 ** 3;

/**
 * bots-10k: 10,000 echo bots in one `pinbot serve`: seconds from spawn until every bot runs, the
 * server's RSS (now and peak), its idle CPU against a server without bots on the same data
 * (same seconds), and, as a check that they all still answer, the event→action latency of 50
 * messages to random bots.
 */
export default defineBench({
  name: 'bots-10k',
  summary: '10,000 embedded bots in one serve: all running ≤ 20 s, RSS ≤ 2 GB, idle CPU ≤ 5% of a core',
  async run(ctx) {
    const tmp = await botsRunDirs('bots-10k', BOTS, BOTS + SENDERS, ctx.progress);
    const { ds, dataDir, baseDir, botsDir } = tmp;
    const t0 = performance.now();
    const srv = await startPinbot({
      runDir: tmp.dir,
      dataDir,
      config: { bots: { dir: botsDir, enabled: true } },
      bots: true,
      timeoutMs: 300_000,
    });
    try {
      const startS = await allRunning(dataDir, BOTS, t0, ctx.progress, 600_000);
      const atStart = srv.memory();
      ctx.progress(
        `bots-10k: all running after ${startS.toFixed(1)} s; settling (and a server ` +
          `without bots starting), then idle CPU over ${IDLE_S} s`,
      );
      const base = await startPinbot({ name: 'baseline', runDir: tmp.dir, dataDir: baseDir });
      await sleep(60_000); // both past their start: UBI catch-up, and the full GCs V8 runs once allocation stops
      let idle: number | undefined;
      let baseline: number | undefined;
      try {
        [idle, baseline] = await cpuPercentBoth(srv, base, IDLE_S);
      } finally {
        await base.stop();
      }
      const mem = srv.memory();
      const senders = ds.meta.users.slice(BOTS);
      const { latencies, lost } = await echoLatencies(
        srv.url,
        50,
        5000,
        (k) => ({ key: senders[k % senders.length]!.key, pin: ds.meta.users[Math.floor(Math.random() * BOTS)]!.pin }),
        3000,
      );
      const gb = (b: number | undefined) => (b === undefined ? 'unknown' : `${(b / GB).toFixed(2)} GB`);
      const cpu = (n: number | undefined) => (n === undefined ? 'unknown' : `${n.toFixed(2)}%`);
      const fig: Figure = {
        bench: 'bots-10k',
        name: `${BOTS.toLocaleString('en-US')} embedded bots: all running; RSS; idle CPU`,
        value:
          `${startS.toFixed(1)} s; RSS ${gb(mem?.rss)} (peak ${gb(mem?.peak)}, ` +
          `${gb(atStart?.rss)} when all ran); idle CPU ${cpu(idle)} of a core (server ` +
          `without bots: ${cpu(baseline)})`,
        p50: latencies.length ? pct(latencies, 50) : undefined,
        p99: latencies.length ? pct(latencies, 99) : undefined,
        target: '≤ 20 s; ≤ 2 GB; ≤ 5%',
        pass: startS <= 20 && mem !== undefined && mem.peak <= 2 * GB && idle !== undefined && idle <= 5 && lost === 0,
        note: `then ${latencies.length}/${latencies.length + lost} echoes to random bots (p50/p99 = event→action ms)`,
      };
      return [fig];
    } finally {
      await srv.stop();
      tmp.cleanup();
    }
  },
});
