import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineBench } from './harness/bench.js';
import { allRunning, botsRunDirs, cpuPercentBoth, echoLatencies, pct, sleep } from './harness/bots-kit.js';
import type { Figure } from './harness/figure.js';
import { startPinbot } from './harness/pinbot-server.js';
import { REPO } from './harness/paths.js';

const BOTS = 1000;
const SENDERS = 100;
const POLL_S = 5;
const SAMPLES = 100;
const IDLE_S = 15;

/**
 * bots: 1,000 echo bots (one YAML file each, default `poll: 5s`, one trigger type) run by
 * `pinbot serve` on its embedded server. Idle CPU: the server over IDLE_S s with no events,
 * against a server on a copy of the same data without bots, measured over the same seconds.
 * Event→action: SAMPLES messages to random bots at random moments; the latency is the reply's
 * timestamp minus the message's (both server timestamps).
 */
export default defineBench({
  name: 'bots',
  summary: '1,000 embedded bots, default poll: event→action p50 ≤ 25 ms, p99 ≤ 150 ms; idle CPU ≤ 1% of a core',
  async run(ctx) {
    if (!existsSync(join(REPO, 'src/runtime')))
      return [{ bench: 'bots', name: 'bots', note: 'not measured: no src/runtime in this build' }];
    const tmp = await botsRunDirs('bots', BOTS, BOTS + SENDERS, ctx.progress);
    const { ds, dataDir, baseDir, botsDir } = tmp;
    const t0 = performance.now();
    const srv = await startPinbot({
      runDir: tmp.dir,
      dataDir,
      config: { bots: { dir: botsDir, enabled: true } },
      bots: true,
    });
    const base = await startPinbot({ name: 'baseline', runDir: tmp.dir, dataDir: baseDir });
    try {
      const startS = await allRunning(dataDir, BOTS, t0, ctx.progress);
      ctx.progress(
        `bots: ${BOTS} running after ${startS.toFixed(1)} s; idle CPU over ${IDLE_S} s (and a server without bots)`,
      );
      await sleep(2 * POLL_S * 1000); // past the start-up burst (first polls spread over 5 s)
      const [idle, baseline] = await cpuPercentBoth(srv, base, IDLE_S);
      ctx.progress(`bots: ${SAMPLES} messages to random bots over ${2 * POLL_S} s`);
      const senders = ds.meta.users.slice(BOTS);
      const { latencies, lost } = await echoLatencies(
        srv.url,
        SAMPLES,
        2 * POLL_S * 1000,
        (k) => ({ key: senders[k % senders.length]!.key, pin: ds.meta.users[Math.floor(Math.random() * BOTS)]!.pin }),
        3000,
      );
      const p50 = latencies.length ? pct(latencies, 50) : undefined;
      const p99 = latencies.length ? pct(latencies, 99) : undefined;
      const cpu = (n: number | undefined) => (n === undefined ? 'unknown' : `${n.toFixed(2)}% of a core`);
      const latency: Figure = {
        bench: 'bots',
        name: `embedded event→action, default poll (${POLL_S} s), 1 trigger type, ${BOTS.toLocaleString('en-US')} bots`,
        p50,
        p99,
        ratio: p50 === undefined ? undefined : p50 / (POLL_S * 1000),
        baseline: `the poll interval (${POLL_S} s)`,
        target: 'p50 ≤ 25 ms, p99 ≤ 150 ms',
        note:
          `${latencies.length}/${latencies.length + lost} ` +
          `replies${lost ? ` (${lost} missing)` : ''}; all ${BOTS} bots running ` +
          `${startS.toFixed(1)} s after spawn`,
        pass: p50 !== undefined && p99 !== undefined && lost === 0 && p50 <= 25 && p99 <= 150,
      };
      const idleFig: Figure = {
        bench: 'bots',
        name: `${BOTS.toLocaleString('en-US')} idle embedded bots: CPU`,
        value: `${cpu(idle)} (server without bots: ${cpu(baseline)})`,
        ratio: idle !== undefined && baseline ? idle / baseline : undefined,
        baseline: 'the same server without bots',
        target: '≤ 1% of a core',
        pass: idle !== undefined && idle <= 1,
        note: `over ${IDLE_S} s, from ${2 * POLL_S} s after all ran`,
      };
      return [latency, idleFig];
    } finally {
      await srv.stop();
      await base.stop();
      tmp.cleanup();
    }
  },
});
