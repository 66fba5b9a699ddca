import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineBench } from './harness/bench.js';
import { freshDist } from './harness/fresh-dist.js';
import { median, type Figure } from './harness/figure.js';
import { REPO, runDir } from './harness/paths.js';
import { startPinbot } from './harness/pinbot-server.js';

/** The targets of issues 22 and 33: a call of the compiled CLI against `node -e 0`. */
const TARGETS = { version: 2, validate: 5, usersAdd: 10 };
const ROUNDS_MIN = 10;

/** Reports the process's own CPU time (all its threads) on fd 3 as it exits. Internal. */
const CPU_PROBE = `data:text/javascript,${encodeURIComponent(
  'import { writeSync } from "node:fs"; process.on("exit", () => { const u = ' +
    'process.cpuUsage(); writeSync(3, String((u.user + u.system) / 1000)); });',
)}`;

/**
 * Wall time of one process, spawn to exit, in ms, then the CPU time of a second run of it (with
 * the probe, which the wall time must not include); throws on a non-zero exit. Internal.
 */
function timed(args: string[], cwd: string, env: NodeJS.ProcessEnv): { wall: number; cpu: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 300)}`);
  const c = spawnSync(process.execPath, ['--import', CPU_PROBE, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  return { wall, cpu: Number(c.output[3]) };
}

/**
 * cli: the compiled `pinbot` command as an operator calls it — `--version`, `bots validate` of
 * one file, `users add` against a running server (through its admin socket) — each against
 * `node -e 0` measured in the same round; the figure is the median of the rounds' ratios.
 */
export default defineBench({
  name: 'cli',
  summary:
    'pinbot --version / bots validate FILE / users add (running server) vs node -e 0 (targets ≤ 2×, ≤ 5×, ≤ 10×)',
  async run(ctx) {
    freshDist(ctx.progress);
    const tmp = runDir('cli');
    const bin = join(REPO, 'bin/pinbot.js');
    // the compiled CLI, whatever the caller's shell says
    const env = { ...process.env, PINBOT_FROM_SOURCE: '', NO_COLOR: '1' };
    const bot = join(tmp.dir, 'greeter.yaml');
    writeFileSync(
      bot,
      'name: greeter\nas: Greeter\nrules:\n  - on: message.received\n    do:\n      - ' +
        'reply: "Hello {{ event.sender.display_name }}"\n',
    );
    const dataDir = join(tmp.dir, 'data');
    const srv = await startPinbot({ runDir: tmp.dir, dataDir });
    const names = ['version', 'validate', 'usersAdd'] as const;
    type Name = (typeof names)[number];
    const wall: Record<Name | 'base', number[]> = { base: [], version: [], validate: [], usersAdd: [] };
    const cpu: Record<Name | 'base', number[]> = { base: [], version: [], validate: [], usersAdd: [] };
    const ratios: Record<Name, number[]> = { version: [], validate: [], usersAdd: [] };
    const cpuRatios: Record<Name, number[]> = { version: [], validate: [], usersAdd: [] };
    try {
      const rounds = Math.max(ctx.rounds, ROUNDS_MIN);
      // a warm-up round: the first start reads everything from disk
      for (let round = 0; round <= rounds; round++) {
        const base = timed(['-e', '0'], tmp.dir, env);
        const t = {
          version: timed([bin, '--version'], tmp.dir, env),
          validate: timed([bin, 'bots', 'validate', bot], tmp.dir, env),
          usersAdd: timed([bin, 'users', 'add', '--name', `user ${round}`, '--data', dataDir, '--json'], tmp.dir, env),
        };
        if (round === 0) continue;
        wall.base.push(base.wall);
        cpu.base.push(base.cpu);
        for (const k of names) {
          wall[k].push(t[k].wall);
          cpu[k].push(t[k].cpu);
          ratios[k].push(t[k].wall / base.wall);
          cpuRatios[k].push(t[k].cpu / base.cpu);
        }
      }
    } finally {
      await srv.stop();
      tmp.cleanup();
    }
    const base = median(wall.base);
    // CPU time moves less than wall time on a busy machine: the notes give it too
    const fig = (k: Name, name: string): Figure => {
      const ratio = median(ratios[k]);
      const note =
        `CPU ${Math.round(median(cpu[k]))} ms, ${median(cpuRatios[k]).toFixed(1)}× ` +
        `node -e 0's ${Math.round(median(cpu.base))} ms`;
      return {
        bench: 'cli',
        name,
        ratio,
        baseline: `node -e 0 (${Math.round(base)} ms)`,
        target: `≤ ${TARGETS[k]}×`,
        pass: ratio <= TARGETS[k],
        value: `${Math.round(median(wall[k]))} ms (median of ${wall[k].length})`,
        note,
      };
    };
    return [
      fig('version', 'cli: pinbot --version'),
      fig('validate', 'cli: pinbot bots validate (one file)'),
      fig('usersAdd', 'cli: pinbot users add (server running)'),
    ];
  },
});
