// What each feature of `serve` costs a read: GET /api/v1/me on pinbot servers that differ in one
// setting each — as `serve` runs it (rate limits on, request log at info, metrics, the
// repository's plugins), a request line written for every read (`log.level: debug`), rate limits off, metrics off,
// no plugins — and Fastify 5 and node:http (bench/baselines/), interleaved round by round as the
// read bench runs them. Per request it prints the server's CPU split into the main thread's user
// and system time and the other threads' (V8's GC helpers, libuv's pool), from
// /proc/PID/task/*/stat; with `--strace` it then counts each server's syscalls per request for a
// few seconds of load (`strace -f -c`, all threads; strace slows the server, so only the counts
// are read). `--before DIR`: a variant `before` runs `DIR/bin/pinbot.js serve` as `serve` runs
// (a copy of an earlier build: `DIR/bin` and `DIR/dist` inside this checkout, so its packages
// resolve) — an A/B of two builds in one run. Variant `bare-swap`: `bare`'s process with bare
// node:http's handler in place of pinbot's listener (read-swap-listener.mjs): against `node`, what
// the process costs a read apart from the listener; against `bare`, what the listener costs.
// Variants `only-NAME`: `serve` with one of the repository's plugins (plugins/NAME.ts and plugins/lib).
// Variants `plugin-js` and `plugin-ts`: `serve` with one plugin that does nothing but its setup,
// written in JavaScript and in TypeScript (tsx's loader then registered): what loading a plugin
// costs a read, apart from what the repository's plugins do.
//   node bin/run-ts.js bench/tools/read-features.ts [--rounds 3] [--duration 3]
//     [--only serve,debug,fastify] [--strace] [--perf DIR] [--before bench/.cache/ab/before]
// `--perf DIR`: then 3 s of load on each server under `perf record` (every thread, JS frames
// named), its top symbols by self time into DIR/NAME.txt.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { UsersMeta } from '../data/users.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { freshDist } from '../harness/fresh-dist.js';
import { loadProblem, runLoad, stopLoad, type LoadResult } from '../harness/load.js';
import { REPO, runDir } from '../harness/paths.js';
import { syscallsUnder } from '../harness/strace.js';
import { settle } from '../harness/rounds.js';
import { spawnServer, type ServerProcess } from '../harness/server-process.js';
import { getAs } from '../read.js';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    strace: { type: 'boolean', default: false },
    perf: { type: 'string' },
    before: { type: 'string' },
  },
});
const rounds = Number(opts.rounds);
const durationS = Number(opts.duration);
const connections = Number(opts.connections);
const progress = (m: string) => console.log(m);

/** Rate limits on with a budget no load reaches, as the read bench's gated row. */
const LIMITED = {
  rate_limits: { enabled: true, general: { limit: 1_000_000_000, window: '1m' } },
  log: { level: 'info' },
};

/** The repository's plugins (plugins/*.ts but their tests). Internal. */
const REPO_PLUGINS = readdirSync(join(REPO, 'plugins'))
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => f.slice(0, -3));

/** The pinbot variants: what each changes against `serve`. */
const PINBOT: Record<string, (noPlugins: string) => Record<string, unknown>> = {
  serve: () => LIMITED,
  // a line per request (2xx are logged at debug: at info, a read writes none)
  debug: () => ({ ...LIMITED, log: { level: 'debug' } }),
  nolimits: () => ({ ...LIMITED, rate_limits: { enabled: false } }),
  nometrics: () => ({ ...LIMITED, metrics: { enabled: false } }),
  noplugins: (dir) => ({ ...LIMITED, plugins: { dir } }),
  // one plugin that does nothing but its setup (which runs in the plugins' AsyncLocalStorage),
  // in JavaScript (no TypeScript loader) and in TypeScript (tsx's loader registered to load it)
  'plugin-js': () => ({ ...LIMITED, plugins: { dir: join(ONE_PLUGIN, 'js') } }),
  'plugin-ts': () => ({ ...LIMITED, plugins: { dir: join(ONE_PLUGIN, 'ts') } }),
  // one of the repository's plugins alone (with plugins/lib): which of them costs a read
  ...Object.fromEntries(
    REPO_PLUGINS.map((p) => [`only-${p}`, () => ({ ...LIMITED, plugins: { dir: join(ONE_PLUGIN, p) } })]),
  ),
  // no plugins, one AsyncLocalStorage run before start (READ_FEATURES_ALS_IMPORT: a module that runs one)
  'noplugins-als': (dir) => ({ ...LIMITED, plugins: { dir } }),
  // `bare`'s process with node:http's handler in place of pinbot's listener (read-swap-listener.mjs)
  'bare-swap': (dir) => ({
    rate_limits: { enabled: false },
    log: { level: 'info' },
    metrics: { enabled: false },
    plugins: { dir },
  }),
  bare: (dir) => ({
    rate_limits: { enabled: false },
    log: { level: 'info' },
    metrics: { enabled: false },
    plugins: { dir },
  }),
};
/**
 * The folders of `plugin-js` and `plugin-ts` (inside the checkout: the plugin imports
 * `pinbot/plugin` as a project's does). Internal.
 */
const ONE_PLUGIN = join(REPO, 'bench/.cache/read-features-plugins');
const NOOP_PLUGIN = `import { definePlugin } from 'pinbot/plugin';
export default definePlugin({ name: 'noop', version: '1.0.0', pinbot: '^0.1.0', setup() {} });
`;
for (const p of REPO_PLUGINS) {
  mkdirSync(join(ONE_PLUGIN, p), { recursive: true });
  cpSync(join(REPO, 'plugins', `${p}.ts`), join(ONE_PLUGIN, p, `${p}.ts`));
  cpSync(join(REPO, 'plugins/lib'), join(ONE_PLUGIN, p, 'lib'), { recursive: true });
}
for (const ext of ['js', 'ts']) {
  mkdirSync(join(ONE_PLUGIN, ext), { recursive: true });
  writeFileSync(join(ONE_PLUGIN, ext, `noop.${ext === 'js' ? 'mjs' : 'ts'}`), NOOP_PLUGIN);
}

/** What `bare-swap` loads into its server: node:http's handler instead of pinbot's listener. */
const SWAP = join(REPO, 'bench/tools/read-swap-listener.mjs');
/** With --perf, the servers name their JS frames for perf (/tmp/perf-PID.map). */
const env = opts.perf ? { NODE_OPTIONS: '--perf-basic-prof-only-functions' } : undefined;
const BASELINES: Record<string, string> = {
  fastify: 'fastify-read.ts',
  node: 'node-read.ts',
  // node:http with one AsyncLocalStorage run (what a loaded plugin turns on, alone)
  'node-als': 'node-read.ts',
};
const all = [...Object.keys(PINBOT), ...(opts.before ? ['before'] : []), ...Object.keys(BASELINES)];
const names = opts.only ? opts.only.split(',') : all;

/** Per thread: user and system ticks (1/100 s). Internal. */
type Threads = Map<number, { utime: number; stime: number; minflt: number }>;

function threads(pid: number): Threads {
  const out: Threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { utime: Number(f[11]), stime: Number(f[12]), minflt: Number(f[7]) });
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** CPU µs per request between two snapshots: main thread user/system, the other threads. */
function split(pid: number, a: Threads, b: Threads, requests: number) {
  const us = (ticks: number) => (ticks * 10_000) / requests;
  let mainUser = 0;
  let mainSys = 0;
  let other = 0;
  let faults = 0;
  for (const [tid, t] of b) {
    const s = a.get(tid) ?? { utime: 0, stime: 0, minflt: 0 };
    faults += t.minflt - s.minflt;
    const du = t.utime - s.utime;
    const ds = t.stime - s.stime;
    if (tid === pid) {
      mainUser += du;
      mainSys += ds;
    } else other += du + ds;
  }
  return {
    mainUser: us(mainUser),
    mainSys: us(mainSys),
    other: us(other),
    total: us(mainUser + mainSys + other),
    faults: faults / requests,
  };
}

async function start(name: string, tmp: string, meta: string, noPlugins: string): Promise<ServerProcess> {
  if (BASELINES[name])
    return spawnServer({
      name,
      args: ['bin/run-ts.js', `bench/baselines/${BASELINES[name]}`, meta],
      env: { ...env, ...(name === 'node-als' ? { BASELINE_ASYNC_STORAGE: '1' } : {}) },
    });
  const config = join(tmp, `${name}.config.yaml`);
  writeFileSync(config, stringify(name === 'before' ? LIMITED : PINBOT[name]!(noPlugins)));
  const bin = name === 'before' ? join(relative(REPO, opts.before!), 'bin/pinbot.js') : 'bin/pinbot.js';
  return spawnServer({
    name,
    args: [bin, 'serve', '--data', join(tmp, name), '--port', '0', '--no-bots', '--config', config],
    env:
      name === 'noplugins-als'
        ? { ...env, NODE_OPTIONS: `${env?.NODE_OPTIONS ?? ''} --import ${process.env.READ_FEATURES_ALS_IMPORT}` }
        : name === 'bare-swap'
          ? { ...env, SWAP_META: meta, NODE_OPTIONS: `${env?.NODE_OPTIONS ?? ''} --import ${SWAP}` }
          : env,
  });
}

/** Syscalls per request of `server` under a load of `seconds` (strace -f -c on all threads). */
async function syscalls(server: ServerProcess, requests: ReturnType<typeof getAs>, seconds: number) {
  const out = join(REPO, 'bench/.cache', `strace-${server.name}.txt`);
  const load = () => runLoad({ url: server.url, connections, durationS: seconds, requests });
  return syscallsUnder(server.pid, out, load, { per: 'a request', of: 'requests' }, 8);
}

/**
 * Where `server`'s CPU goes under `seconds` of load, by perf (cpu-clock samples of every thread,
 * JS frames named through --perf-basic-prof): the top symbols by self time, into DIR/NAME.txt.
 */
async function perfTop(server: ServerProcess, requests: ReturnType<typeof getAs>, seconds: number, dir: string) {
  const data = join(dir, `${server.name}.data`);
  const rec = spawn('perf', ['record', '-F', '1999', '-g', '-o', data, '-p', String(server.pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const r = await runLoad({ url: server.url, connections, durationS: seconds, requests });
  rec.kill('SIGINT');
  await new Promise((r) => rec.once('exit', r));
  const report = spawnSync('perf', ['report', '-i', data, '--no-children', '--sort', 'sym', '--stdio', '-g', 'none'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  writeFileSync(join(dir, `${server.name}.txt`), `${r.total} requests\n${report.stdout}`);
  return `${r.total} requests, report in ${join(dir, `${server.name}.txt`)}`;
}

freshDist(progress);
const ds = await dataset<UsersMeta>('users', { users: 100 }, progress);
const tmp = runDir('read-features');
const meta = join(ds.dir, 'meta.json');
const noPlugins = join(tmp.dir, 'no-plugins');
mkdirSync(noPlugins);
const users = ds.meta.users.slice(0, connections);
const requests = getAs(users, '/api/v1/me');
const servers: Record<string, ServerProcess> = {};
try {
  for (const n of names) {
    if (!BASELINES[n]) copyStore(ds, join(tmp.dir, n));
    servers[n] = await start(n, tmp.dir, meta, noPlugins);
  }
  const results: Record<string, Array<{ r: LoadResult; cpu: ReturnType<typeof split> }>> = {};
  const run = async (n: string, seconds: number) => {
    const s = servers[n]!;
    const a = threads(s.pid);
    const r = await runLoad({ url: s.url, connections, durationS: seconds, requests });
    const b = threads(s.pid);
    await settle(s);
    return { r, cpu: split(s.pid, a, b, Math.max(1, r.total)) };
  };
  for (const n of names) await run(n, 1);
  // every other round in the opposite order: no server always runs right after the same one
  for (let round = 1; round <= rounds; round++)
    for (const n of round % 2 === 1 ? names : [...names].reverse()) {
      const x = await run(n, durationS);
      (results[n] ??= []).push(x);
      const problem = loadProblem(x.r);
      progress(
        `  round ${round} ${n}: ${Math.round(x.r.rps)} req/s, CPU ${x.cpu.total.toFixed(1)} µs/req ` +
          `(main ${x.cpu.mainUser.toFixed(1)} user + ${x.cpu.mainSys.toFixed(1)} sys, other threads ` +
          `${x.cpu.other.toFixed(1)}; ${x.cpu.faults.toFixed(2)} page faults/req)${problem ? ` ${problem}` : ''}`,
      );
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  // a round counts only when every server answered in it without errors (a round that another
  // process's load starved says nothing; on the shared VM some do)
  const valid = Array.from({ length: rounds }, (_, i) =>
    names.every((n) => {
      const r = results[n]![i]!.r;
      return r.total >= 500 && loadProblem(r) === undefined;
    }),
  );
  for (const n of names) results[n] = results[n]!.filter((_, i) => valid[i]);
  const kept = valid.filter(Boolean).length;
  console.log(`\n${kept} of ${rounds} rounds valid (every server answered ≥ 500 requests, no errors)`);
  if (kept === 0) process.exitCode = 1;
  const anchor = results.fastify;
  const before = results.before;
  console.log(
    '\n| server | req/s | CPU µs/req | main user | main sys | other threads | CPU ÷ fastify | ' +
      `req/s ÷ fastify (rounds) |${before ? ' CPU ÷ before (rounds) |' : ''}`,
  );
  console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |${before ? ' --- |' : ''}`);
  for (const n of kept ? names : []) {
    const xs = results[n]!;
    const m = (f: (x: (typeof xs)[number]) => number) => median(xs.map(f));
    const cpuRatio = anchor ? median(xs.map((x, i) => x.cpu.total / anchor[i]!.cpu.total)).toFixed(2) : '';
    const rpsRounds = anchor ? xs.map((x, i) => (x.r.rps / anchor[i]!.r.rps).toFixed(2)) : [];
    const rpsRatio = anchor ? median(xs.map((x, i) => x.r.rps / anchor[i]!.r.rps)).toFixed(2) : '';
    console.log(
      `| ${n} | ${Math.round(m((x) => x.r.rps))} | ${m((x) => x.cpu.total).toFixed(1)} | ` +
        `${m((x) => x.cpu.mainUser).toFixed(1)} | ${m((x) => x.cpu.mainSys).toFixed(1)} | ` +
        `${m((x) => x.cpu.other).toFixed(1)} | ${cpuRatio}× | ${rpsRatio}× (${rpsRounds.join(' ')}) |` +
        (before
          ? ` ${median(xs.map((x, i) => x.cpu.total / before[i]!.cpu.total)).toFixed(2)}× ` +
            `(${xs.map((x, i) => (x.cpu.total / before[i]!.cpu.total).toFixed(2)).join(' ')}) |`
          : ''),
    );
  }
  if (opts.perf) {
    mkdirSync(opts.perf, { recursive: true });
    for (const n of names) console.log(`perf ${n}: ${await perfTop(servers[n]!, requests, 3, opts.perf)}`);
  }
  if (opts.strace) for (const n of names) console.log(`strace ${n}: ${await syscalls(servers[n]!, requests, 2)}`);
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  stopLoad();
  tmp.cleanup();
}
