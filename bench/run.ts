// npm run bench [-- NAME…] [--rounds N] [--duration S] [--connections C] [--no-fail] [--list] [--help]
// Runs the named benches (all by default) and prints their figures as one table; exits 1 when a
// bench failed or a row missed its target (unless --no-fail).
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { benches } from './benches.js';
import type { BenchContext } from './harness/bench.js';
import { detectCores } from './harness/cores.js';
import { freshDist } from './harness/fresh-dist.js';
import { figureLine, tableHeader, type Figure } from './harness/figure.js';
import { stopLoad } from './harness/load.js';

const USAGE = `usage: npm run bench [-- NAME…] [--rounds N] [--duration S] [--connections C] [--no-fail] [--list] [--help]
  NAME…             only these benches (all by default; --list names them)
  --rounds N        rounds per figure, figures are medians (default 5, at least 3; env BENCH_ROUNDS)
  --duration S      seconds of load per round (default 3; env BENCH_DURATION)
  --connections C   concurrent connections of the load generator (default 50)
  --no-fail         exit 0 even when a row misses its target (for exploring; a bench that
                    fails to run still exits 1)
  --list            the benches and their targets
docs/performance.md says how to read the table and profile a bench.`;

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '5' },
        duration: { type: 'string', default: process.env.BENCH_DURATION ?? '3' },
        connections: { type: 'string', default: '50' },
        'no-fail': { type: 'boolean', default: false },
        list: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    // an unknown or malformed option: say which and how to call it, not a stack trace
    console.error(`${(err as Error).message.split('. ')[0]}.\n${USAGE}`);
    process.exit(2);
  }
}
const { values, positionals } = parse();

if (values.help) {
  console.log(USAGE + '\n\nbenches:');
  for (const b of benches) console.log(`  ${b.name.padEnd(12)} ${b.summary}`);
  process.exit(0);
}
if (values.list) {
  for (const b of benches) console.log(`${b.name.padEnd(12)} ${b.summary}`);
  process.exit(0);
}

const unknown = positionals.filter((n) => !benches.some((b) => b.name === n));
if (unknown.length) {
  console.error(`unknown bench ${unknown.join(', ')}; the benches are: ${benches.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
if (!Number.isInteger(rounds) || rounds < 3) {
  console.error('--rounds must be a whole number ≥ 3 (figures are medians of at least 3 rounds)');
  process.exit(2);
}
if (!(durationS >= 1) || !Number.isInteger(connections) || connections < 1) {
  console.error('--duration must be ≥ 1 (seconds) and --connections a whole number ≥ 1');
  process.exit(2);
}

const selected = positionals.length ? benches.filter((b) => positionals.includes(b.name)) : benches;
const ctx: BenchContext = { rounds, durationS, connections, progress: (msg) => process.stderr.write(msg + '\n') };
const started = performance.now();
// Other work on the machine moves every absolute figure; the table says how busy it was.
const loadAtStart = loadavg()[0]!;
ctx.progress(
  `pinbot bench: ${selected.map((b) => b.name).join(', ')}; ${rounds} rounds × ` +
    `${durationS} s, ${connections} connections; ${detectCores().describe}; node ` +
    `${process.version}`,
);

// the benches spawn bin/pinbot.js, which runs dist/: measure the code of this checkout
freshDist(ctx.progress);

const all: Figure[] = [];
let failed = false;
for (const bench of selected) {
  const t0 = performance.now();
  let figures: Figure[];
  try {
    figures = await bench.run(ctx);
  } catch (err) {
    failed = true;
    figures = [{ bench: bench.name, name: bench.name, note: `FAILED: ${(err as Error).message.split('\n')[0]}` }];
    ctx.progress(`${bench.name} failed: ${(err as Error).stack ?? err}`);
  }
  for (const f of figures) console.log(figureLine(f));
  ctx.progress(`  (${bench.name} took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  all.push(...figures);
}

const load = `load average ${loadAtStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end`;
console.log(
  `\npinbot bench, ${new Date().toISOString().slice(0, 16)}Z, node ` +
    `${process.version}, ${detectCores().describe}, ${rounds} rounds × ${durationS} s, ` +
    `${connections} connections, ${((performance.now() - started) / 1000).toFixed(0)} s ` +
    `in all, ${load}\n`,
);
console.log(tableHeader());
for (const f of all) console.log(figureLine(f));
const missed = all.filter((f) => f.pass === false);
if (missed.length)
  console.log(
    `\ntargets missed: ${missed.map((f) => f.name).join('; ')}${values['no-fail'] ? ' (--no-fail: exit 0)' : ''}`,
  );
stopLoad();
// A missed target is a failure of the run, as a failed test is: CI and scripts see it.
process.exit(failed || (missed.length > 0 && !values['no-fail']) ? 1 : 0);
