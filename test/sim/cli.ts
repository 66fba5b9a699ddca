// The wallet simulator:
//   npm run sim -- --seeds 1000 [--start 1] [--jobs 2] [--ops 2000] [--concurrency 32] [--store memory|file|postgres]
//   npm run sim -- --seed N --verbose          (replay one seed)
//   npm run sim -- --store postgres [--database-url postgres://…]   (or DATABASE_URL)
// Runs seeded random workloads (test/sim/workload.ts) and checks the conservation invariant
// after every operation; prints the seed of every failure and exits 1 if any failed.
// With --store postgres each seed gets a fresh database (CREATE DATABASE through the URL, dropped
// once the seed passed); without a URL a throw-away server is started (test/helpers/postgres-server.ts).
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { databaseSource, redactUrl, type DatabaseSource } from './databases.js';
import { simulate } from './workload.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '100' },
    start: { type: 'string', default: '1' },
    seed: { type: 'string' },
    jobs: { type: 'string', default: String(availableParallelism()) },
    shard: { type: 'string' },
    ops: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    users: { type: 'string', default: '8' },
    store: { type: 'string', default: 'memory' },
    'database-url': { type: 'string' },
    // internal, shards: the URL is a server the parent started (nothing is kept on it)
    'throwaway-server': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});

function int(name: keyof typeof values, min: number): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be a whole number ≥ ${min}`);
    process.exit(2);
  }
  return n;
}
const STORES = ['memory', 'file', 'postgres'] as const;
type StoreKind = (typeof STORES)[number];
if (!STORES.includes(values.store as StoreKind)) {
  console.error(`--store is ${STORES.join(', ')}, not ${JSON.stringify(values.store)}`);
  process.exit(2);
}
const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL;
if (values['database-url'] !== undefined && values.store !== 'postgres') {
  console.error('--database-url goes with --store postgres');
  process.exit(2);
}

const all =
  values.seed !== undefined ? [int('seed', 0)] : Array.from({ length: int('seeds', 1) }, (_, i) => int('start', 0) + i);
const opts = {
  ops: int('ops', 1),
  concurrency: int('concurrency', 1),
  users: int('users', 3),
  store: values.store as StoreKind,
};
const started = performance.now();
const RESULT = 'SIM-RESULT ';

/** With --store postgres: where each seed's database is made (a server started here, or the URL's). */
let databases: DatabaseSource | undefined;
if (opts.store === 'postgres') {
  try {
    databases = await databaseSource({ url: databaseUrl });
  } catch (err) {
    console.error(`sim: ${(err as Error).message}`);
    process.exit(2);
  }
}
/** Stops a server started here, then exits. */
const exit = async (code: number): Promise<never> => {
  await databases?.close();
  process.exit(code);
};
process.once('SIGINT', () => void exit(130));

/** Runs `seeds` here, one after another. */
async function runHere(seeds: number[], progress: boolean): Promise<{ failed: number[]; requests: number }> {
  const failed: number[] = [];
  let requests = 0;
  for (const [n, seed] of seeds.entries()) {
    const url = await databases?.create(`sim_${seed}`);
    try {
      const report = await simulate({ seed, ...opts, url });
      requests += report.requests;
      if (values.verbose) console.log(JSON.stringify(report));
      if (url) await databases!.drop(url);
    } catch (err) {
      failed.push(seed);
      // A database on the operator's server is kept for a look; a throw-away server's goes with it.
      const kept = url && databaseUrl && !values['throwaway-server'];
      console.error(`FAIL ${(err as Error).message}${kept ? `\n  (its database is kept: ${redactUrl(url)})` : ''}`);
    }
    if (progress && (n + 1) % 50 === 0)
      console.log(
        `${n + 1}/${seeds.length} seeds, ${failed.length} failed, ` +
          `${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
  }
  return { failed, requests };
}

/** Runs `seeds` in `jobs` child processes (seeds dealt round-robin) and adds up their results. */
async function runSharded(jobs: number): Promise<{ failed: number[]; requests: number }> {
  const self = fileURLToPath(import.meta.url);
  const passthrough = [
    '--ops',
    String(opts.ops),
    '--concurrency',
    String(opts.concurrency),
    '--users',
    String(opts.users),
    '--store',
    opts.store,
    ...(databases
      ? [
          '--database-url',
          databases.adminUrl,
          ...(databaseUrl && !values['throwaway-server'] ? [] : ['--throwaway-server']),
        ]
      : []),
    '--seeds',
    String(all.length),
    '--start',
    String(all[0]),
  ];
  let doneSeeds = 0;
  const results = await Promise.all(
    Array.from(
      { length: jobs },
      (_, k) =>
        new Promise<{ failed: number[]; requests: number }>((resolve, reject) => {
          const child = spawn(process.execPath, [process.argv[1]!, self, ...passthrough, '--shard', `${k}/${jobs}`], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.setEncoding('utf8');
          child.stdout.on('data', (chunk: string) => {
            out += chunk;
            for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
              const line = out.slice(0, nl);
              out = out.slice(nl + 1);
              if (line.startsWith(RESULT)) resolve(JSON.parse(line.slice(RESULT.length)));
              else if (line === 'SEED-DONE' && ++doneSeeds % 50 === 0)
                console.log(`${doneSeeds}/${all.length} seeds, ${((performance.now() - started) / 1000).toFixed(1)} s`);
              else if (line !== 'SEED-DONE') console.log(line);
            }
          });
          child.on('exit', (code) => reject(new Error(`simulator shard ${k} exited with ${code} before reporting`)));
        }),
    ),
  );
  return {
    failed: results.flatMap((r) => r.failed).sort((a, b) => a - b),
    requests: results.reduce((s, r) => s + r.requests, 0),
  };
}

if (values.shard !== undefined) {
  // A child of runSharded: its share of the seeds, then one result line.
  const [k, n] = values.shard.split('/').map(Number) as [number, number];
  const mine = all.filter((_, i) => i % n === k);
  const failed: number[] = [];
  let requests = 0;
  for (const seed of mine) {
    const r = await runHere([seed], false);
    failed.push(...r.failed);
    requests += r.requests;
    console.log('SEED-DONE');
  }
  console.log(RESULT + JSON.stringify({ failed, requests }));
  await exit(0);
}

const jobs = Math.max(1, Math.min(int('jobs', 1), all.length));
const { failed, requests } = jobs > 1 ? await runSharded(jobs) : await runHere(all, !values.verbose);
const secs = (performance.now() - started) / 1000;
const where = databases ? ` on ${databases.where}` : '';
console.log(
  `${all.length} seeds × ${opts.ops} ops (${opts.concurrency} in flight, ` +
    `${opts.store} store${where}, ${jobs} job${jobs > 1 ? 's' : ''}): ${requests} ` +
    `requests in ${secs.toFixed(1)} s`,
);
if (failed.length) console.log(`failing seeds: ${failed.join(' ')}  (replay one: npm run sim -- --seed N --verbose)`);
console.log(`${all.length - failed.length} passed, ${failed.length} failed`);
await exit(failed.length ? 1 : 0);
