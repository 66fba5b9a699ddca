import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { configFrom } from '../src/config/load.js';
import { createKey } from '../src/domain/users/keys.js';
import { createUser } from '../src/domain/users/users.js';
import { grantMoney } from '../src/domain/wallet/grants.js';
import { BotHost } from '../src/runtime/host/bot-host.js';
import { buildRegistry } from '../src/services/registry.js';
import { ubiService } from '../src/services/ubi.js';
import { loadAll, runAll } from '../src/scenario/run-all.js';
import { preferRamTempDir } from '../src/scenario/temp-dir.js';
import { startServer } from '../src/server.js';
import { defineBench } from './harness/bench.js';
import { median, type Figure } from './harness/figure.js';
import { REPO, runDir } from './harness/paths.js';

const TARGET_ONE_MS = 300;
const TARGET_MANY_S = 30;
const MANY = 200;

/**
 * The bot of the figures: a tip jar polling every 5 s (the default cadence). Without its loop
 * guard: alice pays the instant she sees each "Thanks", which the guard reads as a loop between
 * bots (6 replies in a row within 2 s) and pauses — the figures are about waiting, not the guard.
 */
const bot = `  - name: jar
    as: jar
    poll: 5s
    loop_guard: false
    rules: [{ on: transfer.received, do: [accept, { reply: "Thanks {{ event.amount }}" }] }]
`;

/**
 * A 20-step scenario with a bot, a 30-day clock advance and expect_events: the shape of a real
 * scenario. `realTime` leaves out what only a virtual clock can do (the clock step).
 */
function twentySteps(realTime = false): string {
  const pay = (n: number) =>
    `  - as: alice\n    request: POST /wallet/send\n    body: { recipient_pin: "{{ ` +
    `users.jar.pin_code }}", amount: ${n} }\n    expect: { status: 201 }\n`;
  const steps = [
    pay(1),
    '  - expect_event: { message: { to: alice, from: jar, content: "Thanks 1" }, within: 10s }\n',
    ...(realTime ? [] : ['  - clock: { advance: 30d }\n']),
    '  - as: jar\n    request: GET /wallet/balance\n    expect: { body: { balance: { ' +
      'min: 1 } }, schema: { response: GET /wallet/balance } }\n',
  ];
  for (let i = 2; steps.length < 20; i++) {
    steps.push(pay(i));
    if (steps.length < 20)
      steps.push(`  - expect_event: { message: { to: alice, from: jar, content: "Thanks ${i}" }, within: 10s }\n`);
  }
  const users = realTime ? '{ alice: {}, jar: {} }' : '{ alice: { balance: 500 }, jar: {} }';
  return (
    `# a generated bench scenario\nname: twenty steps\nusers: ` +
    `${users}\n${realTime ? '' : `bots:\n${bot}`}steps:\n${steps.slice(0, 20).join('')}`
  );
}

/**
 * scenarios: wall time of one 20-step scenario (a bot, `clock: { advance: 30d }`,
 * expect_events) on its embedded server and virtual clock, median of the rounds, against the
 * same wait on real time (a 5 s poll bot on a real server, woken at once by each change: measured once); and
 * 200 scenarios with `pinbot scenario run --parallel 2` (process start included).
 */
export default defineBench({
  name: 'scenarios',
  summary:
    'a 20-step scenario on the virtual clock (target ≤ 300 ms) vs real time; 200 ' +
    'scenarios --parallel 2 (target ≤ 30 s)',
  async run(ctx) {
    const tmp = runDir('scenarios');
    // as `pinbot scenario run` does: the scenarios' throwaway stores in RAM when the machine has it
    const tmpBefore = process.env.TMPDIR;
    const ram = preferRamTempDir();
    const cpu0 = process.cpuUsage();
    const figures: Figure[] = [];
    try {
      const file = join(tmp.dir, 'twenty.yaml');
      writeFileSync(file, twentySteps());
      const { scenarios, problems } = await loadAll([file]);
      if (problems.length) throw new Error(`bench scenario invalid: ${problems[0]!.message}`);
      await runAll(scenarios, { parallel: 1 }); // warm-up
      const times: number[] = [];
      for (let i = 0; i < Math.max(ctx.rounds, 10); i++) {
        const { results } = await runAll(scenarios, { parallel: 1 });
        if (results[0]!.status !== 'passed')
          throw new Error(
            `bench scenario failed: ${JSON.stringify(results[0]!.steps.find((s) => s.status === 'failed'))}`,
          );
        times.push(results[0]!.ms);
      }
      const one = median(times);
      const cpu = process.cpuUsage(cpu0);
      const cpuMs = (cpu.user + cpu.system) / 1000 / (times.length + 1);
      figures.push({
        bench: 'scenarios',
        name: 'scenario: 20 steps, bot, advance 30d (virtual clock)',
        value: `${Math.round(one)} ms per scenario (median of ${times.length}), ${Math.round(cpuMs)} ms CPU`,
        target: `≤ ${TARGET_ONE_MS} ms`,
        pass: one <= TARGET_ONE_MS,
        note: `stores in ${ram ?? process.env.TMPDIR ?? '/tmp'}; load average ${loadavg()[0]!.toFixed(1)}`,
      });

      ctx.progress('  scenarios: the same bot waits on real time (a 5 s poll; this takes a while)');
      const real = await realTimeWaits(join(tmp.dir, 'real'));
      figures.push({
        bench: 'scenarios',
        name: 'same check, real time (5 s poll bot, remote mode)',
        value:
          `${(real.total / 1000).toFixed(1)} s per scenario without the 30 d advance; ` +
          `${(real.perWait / 1000).toFixed(1)} s per expect_event (median of ` +
          `${real.waits})`,
        note: 'a 30 d advance has no real-time equivalent',
      });

      const many = join(tmp.dir, 'many');
      mkdirSync(many);
      for (let i = 0; i < MANY; i++)
        writeFileSync(
          join(many, `s${String(i).padStart(3, '0')}.yaml`),
          twentySteps().replace('name: twenty steps', `name: twenty steps ${i}`),
        );
      ctx.progress(`  scenarios: ${MANY} scenarios with --parallel 2`);
      const t0 = performance.now();
      const child = spawn(process.execPath, ['bin/pinbot.js', 'scenario', 'run', many, '--parallel', '2', '--quiet'], {
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const [code] = (await once(child, 'exit')) as [number | null];
      const s = (performance.now() - t0) / 1000;
      figures.push({
        bench: 'scenarios',
        name: `${MANY} scenarios, --parallel 2 (pinbot scenario run)`,
        value: `${s.toFixed(1)} s total, ${Math.round((s * 1000) / MANY)} ms a scenario`,
        target: `≤ ${TARGET_MANY_S} s`,
        pass: code === 0 && s <= TARGET_MANY_S,
        note: code === 0 ? `load average ${loadavg()[0]!.toFixed(1)}` : `exit ${code}: ${stderr.slice(0, 200)}`,
      });
    } finally {
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
      tmp.cleanup();
    }
    return figures;
  },
});

/**
 * Runs the 20-step scenario (less its clock step) in remote mode against a real-time server
 * whose bot polls every 5 s. Internal. */
async function realTimeWaits(dir: string): Promise<{ total: number; perWait: number; waits: number }> {
  const botsDir = join(dir, 'bots');
  mkdirSync(botsDir, { recursive: true });
  writeFileSync(join(botsDir, 'jar.yaml'), bot.replace(/^ {2}- /, '').replace(/^ {4}/gm, ''));
  const log = pino({ level: 'silent' });
  const config = configFrom({ rate_limits: { enabled: false } });
  const dataDir = join(dir, 'data');
  const server = await startServer({ dataDir, config, host: '127.0.0.1', port: 0, log, services: [ubiService()] });
  const stateDir = join(dataDir, 'bots');
  const registry = await buildRegistry({ config, log });
  const host = new BotHost({
    ...server.deployment.botHostDeps({ env: server.env, url: server.url, stateDir }),
    registry,
    log,
    clock: server.clock,
    scheduler: server.scheduler,
    dir: botsDir,
  });
  try {
    const keys = await server.store.transaction((tx) => {
      const out: Record<string, string> = {};
      for (const name of ['alice', 'jar']) {
        const u = createUser(tx, server.env, { name });
        if (name === 'alice') grantMoney(tx, server.env, u.id, 50_000);
        out[name] = createKey(tx, server.env, u.id).api_key;
      }
      return out;
    });
    await host.start();
    const file = join(dir, 'real.yaml');
    writeFileSync(file, twentySteps(true));
    const { scenarios, problems } = await loadAll([file], { remoteUsers: Object.keys(keys) });
    if (problems.length) throw new Error(problems[0]!.message);
    const { results } = await runAll(scenarios, { parallel: 1, remote: { url: server.url, keys } });
    const waits = results[0]!.steps.filter((s) => s.label.startsWith('expect_event')).map((s) => s.ms);
    if (results[0]!.status !== 'passed')
      throw new Error(
        `real-time scenario failed: ${JSON.stringify(results[0]!.steps.find((s) => s.status === 'failed'))}`,
      );
    return { total: results[0]!.ms, perWait: median(waits), waits: waits.length };
  } finally {
    await host.stop();
    await server.close();
  }
}
