// The wallet simulator:
//   npm run sim -- --seeds 1000 [--start 1] [--jobs 2] [--ops 2000] [--concurrency 32] [--store memory|file]
//   npm run sim -- --seed N --verbose          (replay one seed)
// Runs seeded random workloads (test/sim/workload.ts) and checks the conservation invariant
// after every operation; prints the seed of every failure and exits 1 if any failed.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
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
if (values.store !== 'memory' && values.store !== 'file') {
  console.error('--store is memory or file');
  process.exit(2);
}

const all = values.seed !== undefined ? [int('seed', 0)] : Array.from({ length: int('seeds', 1) }, (_, i) => int('start', 0) + i);
const opts = { ops: int('ops', 1), concurrency: int('concurrency', 1), users: int('users', 3), store: values.store as 'memory' | 'file' };
const started = performance.now();
const RESULT = 'SIM-RESULT ';

/** Runs `seeds` here, one after another. */
async function runHere(seeds: number[], progress: boolean): Promise<{ failed: number[]; requests: number }> {
  const failed: number[] = [];
  let requests = 0;
  for (const [n, seed] of seeds.entries()) {
    try {
      const report = await simulate({ seed, ...opts });
      requests += report.requests;
      if (values.verbose) console.log(JSON.stringify(report));
    } catch (err) {
      failed.push(seed);
      console.error(`FAIL ${(err as Error).message}`);
    }
    if (progress && (n + 1) % 50 === 0) console.log(`${n + 1}/${seeds.length} seeds, ${failed.length} failed, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return { failed, requests };
}

/** Runs `seeds` in `jobs` child processes (seeds dealt round-robin) and adds up their results. */
async function runSharded(jobs: number): Promise<{ failed: number[]; requests: number }> {
  const self = fileURLToPath(import.meta.url);
  const passthrough = ['--ops', String(opts.ops), '--concurrency', String(opts.concurrency), '--users', String(opts.users), '--store', opts.store, '--seeds', String(all.length), '--start', String(all[0])];
  let doneSeeds = 0;
  const results = await Promise.all(
    Array.from({ length: jobs }, (_, k) =>
      new Promise<{ failed: number[]; requests: number }>((resolve, reject) => {
        const child = spawn(process.execPath, [process.argv[1]!, self, ...passthrough, '--shard', `${k}/${jobs}`], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
            const line = out.slice(0, nl);
            out = out.slice(nl + 1);
            if (line.startsWith(RESULT)) resolve(JSON.parse(line.slice(RESULT.length)));
            else if (line === 'SEED-DONE' && ++doneSeeds % 50 === 0) console.log(`${doneSeeds}/${all.length} seeds, ${((performance.now() - started) / 1000).toFixed(1)} s`);
            else if (line !== 'SEED-DONE') console.log(line);
          }
        });
        child.on('exit', (code) => reject(new Error(`simulator shard ${k} exited with ${code} before reporting`)));
      }),
    ),
  );
  return { failed: results.flatMap((r) => r.failed).sort((a, b) => a - b), requests: results.reduce((s, r) => s + r.requests, 0) };
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
  process.exit(0);
}

const jobs = Math.max(1, Math.min(int('jobs', 1), all.length));
const { failed, requests } = jobs > 1 ? await runSharded(jobs) : await runHere(all, !values.verbose);
const secs = (performance.now() - started) / 1000;
console.log(`${all.length} seeds × ${opts.ops} ops (${opts.concurrency} in flight, ${opts.store} store, ${jobs} job${jobs > 1 ? 's' : ''}): ${requests} requests in ${secs.toFixed(1)} s`);
if (failed.length) console.log(`failing seeds: ${failed.join(' ')}  (replay one: npm run sim -- --seed N --verbose)`);
console.log(`${all.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length ? 1 : 0);
