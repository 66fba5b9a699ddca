/**
 * The long versions of the reliability tests (docs/reliability.md):
 *
 *   npm run torture -- --kills 1000            crash loop: 1,000 SIGKILLs of `pinbot serve`
 *   npm run torture -- --fuzz 100000           100,000 fuzz requests from /openapi.json
 *   npm run torture -- --matrix --canary       authorization matrix and secrets canary
 *   npm run torture -- --kills 50 --seed 7     replay a schedule
 *   npm run torture -- --log-flood 60          keyless requests with 14 kB headers for 60 s (RSS)
 *   npm run torture -- --store postgres --kills 50 [--processes 3] [--database-url URL]
 *                                              the crash loop, fuzz and matrix on the PostgreSQL store
 *
 * Prints the figures of each part; exits 1 if any must-be-zero figure is not zero.
 */
import { Command } from 'commander';
import { runMatrix } from './auth-matrix.js';
import { runCanary } from './canary.js';
import { runCrashLoop, type CrashFigures } from './crash-loop.js';
import { runFuzz } from './fuzz.js';
import { databaseSource, redactUrl, type DatabaseSource } from '../sim/databases.js';
import { runLogFlood } from './log-flood.js';

const program = new Command('torture')
  .description('long reliability runs: crash loop, fuzz, authorization matrix, canary')
  .option('--kills <n>', 'crash loop: number of SIGKILLs', (v) => Number(v))
  .option('--fuzz <n>', 'fuzz: number of requests', (v) => Number(v))
  .option('--matrix', 'authorization matrix')
  .option('--canary', 'secrets canary')
  .option('--seed <n>', 'seed of the schedule and the generated requests', (v) => Number(v), Date.now() % 1_000_000)
  .option('--burst <min-max>', 'crash loop: write burst before each kill, ms', '50-300')
  .option('--clients <n>', 'crash loop: concurrent clients', (v) => Number(v), 4)
  .option('--parallel <n>', 'crash loop: independent loops side by side (seed, seed + 1, …)', (v) => Number(v), 1)
  .option('--max-minutes <n>', 'crash loop: stop after this many minutes and report how far it got', (v) => Number(v))
  .option(
    '--log-flood [seconds]',
    'log flood: 8 connections pipelining keyless requests with a 14 kB header (default 60 s)',
  )
  .option('--flood-root <dir>', 'log flood: the checkout whose bin/pinbot.js is attacked', '.')
  .option('--flood-reader <how>', 'log flood: the server\'s stdout is "stalled" (never read) or "fast"', 'stalled')
  .option('--flood-no-limits', 'log flood: with rate_limits.enabled false (only the log buffer bound holds)')
  .option(
    '--store <driver>',
    'file, or postgres: the crash loop, fuzz and matrix on the PostgreSQL store (a fresh database each)',
    'file',
  )
  .option(
    '--database-url <url>',
    'postgres: the server to make the databases on (a role with CREATEDB; default ' +
      '$DATABASE_URL, else a throw-away server is started)',
  )
  .option(
    '--processes <n>',
    'crash loop on postgres: serve processes on the database at once (one of them killed each cycle)',
    (v) => Number(v),
    1,
  )
  .parse();

const opts = program.opts<{
  kills?: number;
  fuzz?: number;
  matrix?: boolean;
  canary?: boolean;
  seed: number;
  burst: string;
  clients: number;
  parallel: number;
  maxMinutes?: number;
  logFlood?: string | boolean;
  floodRoot: string;
  floodReader: 'stalled' | 'fast';
  floodNoLimits?: boolean;
  store: string;
  databaseUrl?: string;
  processes: number;
}>();
const usage = (msg: string): never => {
  console.error(`torture: ${msg}`);
  process.exit(2);
};
if (opts.store !== 'file' && opts.store !== 'postgres')
  usage(`--store is file or postgres, not ${JSON.stringify(opts.store)}`);
if (opts.databaseUrl !== undefined && opts.store !== 'postgres') usage('--database-url goes with --store postgres');
if (!Number.isInteger(opts.processes) || opts.processes < 1 || opts.processes > 8)
  usage('--processes is a whole number from 1 to 8');
if (opts.processes > 1 && opts.store !== 'postgres')
  usage('--processes goes with --store postgres (several serve processes share one database)');
const givenUrl = opts.databaseUrl ?? process.env.DATABASE_URL;
/** With --store postgres: where each part's database is made. */
let databases: DatabaseSource | undefined;
if (opts.store === 'postgres') {
  try {
    databases = await databaseSource({ url: givenUrl });
  } catch (err) {
    usage((err as Error).message);
  }
}
/** A fresh database for one part (postgres), undefined on the file store. */
const database = (label: string) => databases?.create(label);
/** Drops a part's database, unless it failed on the operator's server (kept for a look). */
const done = async (url: string | undefined, failed: boolean) => {
  if (!url) return;
  if (failed && givenUrl) console.log(`  (database kept for a look: ${redactUrl(url)})`);
  else await databases!.drop(url);
};
process.once('SIGINT', () => void databases?.close().finally(() => process.exit(130)));
const nothing =
  opts.kills === undefined && opts.fuzz === undefined && !opts.matrix && !opts.canary && opts.logFlood === undefined;
const bad: string[] = [];
const line = (label: string, value: unknown, mustBeZero = false) => {
  const text = typeof value === 'number' ? value.toLocaleString('en-US') : String(value);
  console.log(`  ${label.padEnd(44)} ${text}${mustBeZero ? (value === 0 ? '' : '   <-- must be 0') : ''}`);
  if (mustBeZero && value !== 0) bad.push(label);
};
let lastLine = 0;
/** Progress on one terminal line; in a log file, one line every 30 s. */
const progress = (s: string) => {
  if (process.stderr.isTTY) process.stderr.write(`\r${s}   `);
  else if (Date.now() - lastLine > 30_000) (lastLine = Date.now()), process.stderr.write(`${s}\n`);
};

const started = Date.now();
console.log(`seed ${opts.seed}${databases ? `, PostgreSQL store on ${databases.where}` : ''}`);
if (opts.kills !== undefined || nothing) {
  const kills = opts.kills ?? 20;
  const [lo, hi] = opts.burst.split('-').map(Number) as [number, number];
  const deadline = opts.maxMinutes ? Date.now() + opts.maxMinutes * 60_000 : Infinity;
  // --parallel N runs N independent loops (own data dir, seed + i) and adds their figures up.
  const loops = Math.max(1, opts.parallel);
  const live: CrashFigures[] = [];
  const urls = await Promise.all(Array.from({ length: loops }, (_, i) => database(`crash_${opts.seed + i}`)));
  const parts = await Promise.all(
    Array.from({ length: loops }, (_, i) =>
      runCrashLoop({
        kills: Math.floor(kills / loops) + (i < kills % loops ? 1 : 0),
        seed: opts.seed + i,
        burstMs: [lo, hi],
        clients: opts.clients,
        database: urls[i],
        processes: opts.processes,
        onProgress: (x: CrashFigures) => {
          live[i] = x;
          const done = live.reduce((n, y) => n + (y?.kills ?? 0), 0);
          const acked = live.reduce((n, y) => n + (y?.acknowledged ?? 0), 0);
          const lost = live.reduce((n, y) => n + (y?.lost ?? 0), 0);
          progress(
            `kill ${done}/${kills}  acknowledged ${acked}  lost ${lost}  ` +
              `${(done / ((Date.now() - started) / 60_000)).toFixed(1)} kills/min`,
          );
        },
        stopWhen: () => Date.now() > deadline,
      }),
    ),
  );
  const f = sumFigures(parts);
  process.stderr.write('\n');
  const on = databases
    ? `, PostgreSQL store${opts.processes > 1 ? `, ${opts.processes} serve processes per database` : ''}`
    : '';
  console.log(
    `\ncrash loop (${(f.ms / 1000).toFixed(0)} s, ` +
      `${(f.kills / (f.ms / 60_000)).toFixed(1)} ` +
      `kills/min${loops > 1 ? `, ${loops} loops side by side` : ''}${on})`,
  );
  line('kills (SIGKILL)', f.kills);
  line('  of which during start-up / recovery', f.killsDuringStart);
  line('starts', f.starts);
  line('acknowledged writes', f.acknowledged);
  for (const [k, n] of Object.entries(f.byKind).sort((a, b) => b[1] - a[1])) line(`  ${k}`, n);
  line('lost acknowledged writes', f.lost, true);
  line('5xx answers', f.serverErrors, true);
  line('unloadable starts', f.unloadableStarts, true);
  if (f.damageRefused) line('starts refused after sabotage', f.damageRefused);
  line('writes retried after a kill (Idempotency-Key)', f.retried);
  line('duplicated by a retry', f.duplicates, true);
  line('money invariant checks', f.invariantChecks);
  line('money invariant violations', f.invariantViolations, true);
  if (databases) {
    line('fresh loads of the database checked', f.databaseChecks);
    line('  failing (start-up checks, books)', f.databaseProblems, true);
  }
  line('transactions at the end', f.transactions);
  if (!databases) line('torn journal tails dropped at start', f.tornTails);
  line('API keys in server logs', f.keysInLogs, true);
  for (const s of f.samples) console.log(`    ${s}`);
  const failed = bad.length > 0;
  for (const u of urls) await done(u, failed);
}
if (opts.fuzz !== undefined || nothing) {
  const url = await database('fuzz');
  const before = bad.length;
  const f = await runFuzz({
    requests: opts.fuzz ?? 2000,
    seed: opts.seed,
    database: url,
    onProgress: (n) => progress(`fuzz ${n}/${opts.fuzz ?? 2000}`),
  });
  process.stderr.write('\n');
  console.log(`\nfuzz (${(f.ms / 1000).toFixed(0)} s, ${f.operations} operations)`);
  line('requests', f.requests);
  line('  valid / broken', `${f.valid} / ${f.requests - f.valid}`);
  line(
    '  by status',
    Object.entries(f.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', '),
  );
  line('5xx', f.serverErrors, true);
  line('responses breaking their documented schema', f.schemaBreaks, true);
  line('rejected requests that wrote', f.rejectedWrites, true);
  line('balance changes from rejected requests', f.balanceChanges, true);
  line('idempotent retries / not byte-for-byte', `${f.replays} / ${f.replayMismatches}`);
  if (f.replayMismatches) bad.push('replay mismatches');
  line('operations reached with a 2xx', `${f.operationsWith2xx.length} of ${f.operations}`);
  if (f.money)
    line(
      'money invariant',
      f.money.holds ? `holds (${f.money.transactions} transactions)` : `BROKEN ${JSON.stringify(f.money)}`,
    );
  if (f.money && !f.money.holds) bad.push('money invariant');
  for (const s of f.samples) console.log(`    ${s}`);
  await done(url, bad.length > before);
}
if (opts.matrix || nothing) {
  const url = await database('matrix');
  const before = bad.length;
  const m = await runMatrix({ seed: opts.seed, database: url });
  console.log(`\nauthorization matrix`);
  line('routes', m.routes);
  line('routes covered', m.covered);
  line('routes not covered', m.uncovered.length, true);
  line('requests', m.requests);
  line('leaks', m.leaks, true);
  for (const s of [...m.uncovered, ...m.samples]) console.log(`    ${s}`);
  await done(url, bad.length > before);
}
if (opts.canary || nothing) {
  const url = await database('canary');
  const before = bad.length;
  const c = await runCanary({ seed: opts.seed, database: url });
  console.log(`\nsecrets canary`);
  line('requests', c.requests);
  line(
    '  by status',
    Object.entries(c.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', '),
  );
  if (url)
    line('searched: log lines / files / tables / responses', `${c.logLines} / ${c.files} / ${c.tables} / ${c.bodies}`);
  else line('searched: log lines / files / responses', `${c.logLines} / ${c.files} / ${c.bodies}`);
  line('occurrences of the key', c.occurrences, true);
  line('500 answers showing more than internal_error', c.revealing500s, true);
  for (const s of c.where) console.log(`    ${s}`);
  await done(url, bad.length > before);
}
if (opts.logFlood !== undefined) {
  const seconds = typeof opts.logFlood === 'string' ? Number(opts.logFlood) : 60;
  const f = await runLogFlood({
    seconds,
    root: opts.floodRoot,
    reader: opts.floodReader,
    limits: !opts.floodNoLimits,
    onProgress: progress,
  });
  process.stderr.write('\n');
  console.log(
    `\nlog flood (${f.seconds} s, stdout ` +
      `${opts.floodReader}${opts.floodNoLimits ? ', rate limits off' : ''}, ` +
      `${opts.floodRoot})`,
  );
  line('attack requests answered', f.answered);
  line(
    '  by status',
    Object.entries(f.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', '),
  );
  line('server RSS MB: start / max / end', `${f.rssStartMb} / ${f.rssMaxMb} / ${f.rssEndMb}`);
  line('  every second', f.rssSeries.join(' '));
  line('other user: served / asked', `${f.userOk} / ${f.userRequests}`);
  line('other user latency ms: p50 / p99 / max', `${f.userP50} / ${f.userP99} / ${f.userMax}`);
  if (f.killed) console.log('  (server stopped early: RSS passed the safety limit)');
  line('RSS over 300 MB', f.rssMaxMb > 300 ? 1 : 0, true);
  line('other user requests not served', f.userRequests - f.userOk, true);
}
/** Adds up the figures of loops run side by side (ms: the longest). Internal. */
function sumFigures(parts: CrashFigures[]): CrashFigures {
  const out = { ...parts[0]!, byKind: { ...parts[0]!.byKind }, samples: [...parts[0]!.samples] };
  for (const p of parts.slice(1)) {
    for (const [k, v] of Object.entries(p))
      if (typeof v === 'number' && k !== 'seed' && k !== 'ms') (out as unknown as Record<string, number>)[k]! += v;
    for (const [k, n] of Object.entries(p.byKind)) out.byKind[k] = (out.byKind[k] ?? 0) + n;
    out.samples.push(...p.samples);
    out.ms = Math.max(out.ms, p.ms);
  }
  return out;
}

console.log(bad.length ? `\nFAILED: ${bad.join(', ')}` : '\nall must-be-zero figures are zero');
await databases?.close();
process.exit(bad.length ? 1 : 0);
