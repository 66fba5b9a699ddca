// Issue 24: the store-side cost of one message write, without HTTP.
// node bin/run-ts.js bench/tools/write-core.ts [--writes N] [--rounds R] [--concurrency C] [--src]
//
// Runs what `POST /conversations/:id/messages` does below the HTTP layer, N times per round:
// a transaction through the real FileStore (journal line, group-commit fdatasync) wrapped by
// `observeCommits` with the request key as its cause, with the commit listeners `startServer`
// wires for `pinbot serve --no-bots` (the API's change counters), running the domain function
// (`sendToConversation`) and rendering the answer (`toMessage`), C writes in flight (one chain per
// "connection", each into its own direct conversation, as the write bench does). It reports per
// write: CPU µs (`process.cpuUsage`, every thread: the fdatasync calls too), bytes allocated on
// the JS heap (from `v8.GCProfiler`'s before/after of each collection) and collections per 1,000
// writes; then the medians over the rounds. By default it runs the compiled `dist/` (what
// `pinbot serve` runs; build it first: `npm run build`), `--src` runs the sources through tsx,
// `--dist DIR` another build (e.g. of a worktree of main) to compare in one sitting, `--dir
// /dev/shm` the data on tmpfs (no disk work: the JS side's cost, far less noisy).
// `--heap-sample` also samples every allocation of the rounds (collected objects included) and
// prints the functions that allocate most, by self bytes; `--cpu-profile FILE` writes a CPU profile
// of the rounds only (not the set-up nor the snapshot at close) for bench/tools/profile-summary.ts.
// `--idempotency`: each write with an Idempotency-Key of its own, as the write bench sends them:
// the key claimed (its hashes), the outcome recorded in the same transaction (the `day` index).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';

const { values: args } = parseArgs({
  options: {
    writes: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '50' },
    src: { type: 'boolean', default: false },
    dist: { type: 'string' },
    dir: { type: 'string' },
    'heap-sample': { type: 'boolean', default: false },
    'cpu-profile': { type: 'string' },
    idempotency: { type: 'boolean', default: false },
  },
});
const WRITES = Number(args.writes);
const ROUNDS = Number(args.rounds);
const CONC = Number(args.concurrency);
// --dist DIR: another checkout's build, to compare before and after in one sitting
const root = args.dist ? resolve(args.dist) : resolve(import.meta.dirname, '../..', args.src ? 'src' : 'dist');
const ext = args.src ? '.ts' : '.js';
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, path + ext)).href)) as T;

type M = typeof import('../../src/store/file/file-store.js');
const { FileStore } = await load<M>('store/file/file-store');
const { observeCommits } =
  await load<typeof import('../../src/store/core/commit-signal.js')>('store/core/commit-signal');
const { ChangeCounters } =
  await load<typeof import('../../src/api/reads/change-counters.js')>('api/reads/change-counters');
const { configFrom } = await load<typeof import('../../src/config/load.js')>('config/load');
const { systemClock } = await load<typeof import('../../src/clock/clock.js')>('clock/clock');
const { createUser } = await load<typeof import('../../src/domain/users/users.js')>('domain/users/users');
const { createKey } = await load<typeof import('../../src/domain/users/keys.js')>('domain/users/keys');
const { directConversation } = await load<typeof import('../../src/domain/messaging/conversations.js')>(
  'domain/messaging/conversations',
);
const { sendToConversation } = await load<typeof import('../../src/domain/messaging/send.js')>('domain/messaging/send');
const { toMessage } = await load<typeof import('../../src/domain/messaging/messages.js')>('domain/messaging/messages');
const { Idempotency, Claim } =
  await load<typeof import('../../src/api/writes/idempotency.js')>('api/writes/idempotency');

// --dir /dev/shm: the journal on tmpfs, where fdatasync does nothing and a write is a copy, so
// the figures are the JS side's (the kernel's disk work, the noisiest part, left out)
const dir = mkdtempSync(join(args.dir ?? tmpdir(), 'pinbot-write-core-'));
// the real journal file, counting its appends: how many writes share an fdatasync (group commit)
const { openAppendFile } = await load<typeof import('../../src/store/file/journal-file.js')>('store/file/journal-file');
let appends = 0;
const opened = await FileStore.open(join(dir, 'data'), {
  openAppend: async (path) => {
    const real = await openAppendFile(path);
    return { ...real, append: (data) => (appends++, real.append(data)) };
  },
});
const { store, commits } = observeCommits(opened);
const counters = ChangeCounters.of(commits);
const env = { clock: systemClock, config: configFrom({}) };
const idempotency = new Idempotency(store, systemClock);
let keys = 0;

// 2C users, C direct conversations: connection i writes as user 2i into conversation i.
const seats = await store.transaction((tx) => {
  const out = [];
  for (let i = 0; i < CONC; i++) {
    const a = createUser(tx, env, { name: `core-${2 * i}` });
    const b = createUser(tx, env, { name: `core-${2 * i + 1}` });
    const key = createKey(tx, env, a.id);
    out.push({ user: a, keyId: key.id, conv: directConversation(tx, env, a.id, b.id).conversation.id });
  }
  return out;
});
const CONTENT = 'a message of about a hundred bytes: the quick brown fox jumps over the lazy dog, twice or so.';

/** N writes, C chains in flight; what the API's route does inside its transaction. */
async function writes(n: number): Promise<void> {
  let left = n;
  const chain = async (seat: (typeof seats)[number]) => {
    while (left > 0) {
      left--;
      // the request key as the API gives it: the commit's cause (builds before it ignore the option)
      const op = (tx: Parameters<Parameters<typeof store.transaction>[0]>[0]) => {
        const m = sendToConversation(tx, env, seat.user, seat.conv, CONTENT);
        return { status: 201, body: toMessage(tx, m) };
      };
      if (args.idempotency) {
        const call = { target: `POST /api/v1/conversations/${seat.conv}/messages`, body: { content: CONTENT } };
        const claim = idempotency.claim(call, seat.user.id, `write-core-${++keys}`);
        if (!(claim instanceof Claim)) throw new Error('a fresh key was replayed');
        try {
          claim.outcome(await store.transaction((tx) => claim.run(tx, op), { cause: seat.keyId }));
        } finally {
          claim.release();
        }
      } else await store.transaction(op, { cause: seat.keyId });
      counters.version(seat.user.id); // what a conditional read would ask
    }
  };
  await Promise.all(seats.map(chain));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

await writes(Math.min(WRITES, 5000)); // warm-up: optimised code, a grown heap
const inspector = args['heap-sample'] || args['cpu-profile'] ? new Session() : undefined;
inspector?.connect();
if (args['heap-sample']) {
  await inspector!.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
if (args['cpu-profile']) {
  await inspector!.post('Profiler.enable');
  await inspector!.post('Profiler.start');
}
const rows: Array<{ cpu: number; bytes: number; gcs: number; wall: number }> = [];
for (let r = 0; r < ROUNDS; r++) {
  const profiler = new GCProfiler();
  const used0 = getHeapStatistics().used_heap_size;
  profiler.start();
  const appends0 = appends;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await writes(WRITES);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const used1 = getHeapStatistics().used_heap_size;
  const stats = profiler.stop()!.statistics;
  // allocated = growth between collections + what each collection found (before − after the previous)
  let bytes = 0;
  let prev = used0;
  for (const s of stats) {
    bytes += s.beforeGC.heapStatistics.usedHeapSize - prev;
    prev = s.afterGC.heapStatistics.usedHeapSize;
  }
  bytes += used1 - prev;
  const row = {
    cpu: (cpu.user + cpu.system) / WRITES,
    bytes: bytes / WRITES,
    gcs: (stats.length * 1000) / WRITES,
    wall: (wall * 1000) / WRITES,
  };
  rows.push(row);
  console.log(
    `round ${r + 1}: ${row.cpu.toFixed(1)} CPU µs/write, ${Math.round(row.bytes)} B ` +
      `allocated/write, ${row.gcs.toFixed(2)} GCs/1k writes, ${row.wall.toFixed(1)} µs ` +
      `wall/write, ${(WRITES / (appends - appends0)).toFixed(1)} writes per fdatasync`,
  );
}
console.log(
  `median of ${ROUNDS} × ${WRITES} writes (${CONC} in flight, ` +
    `${args.src ? 'src via tsx' : root}${args.idempotency ? ', Idempotency-Key' : ''}): ${median(rows.map((r) => r.cpu)).toFixed(1)} ` +
    `CPU µs/write, ${Math.round(median(rows.map((r) => r.bytes)))} B/write, ` +
    `${median(rows.map((r) => r.gcs)).toFixed(2)} GCs/1k writes`,
);
if (args['cpu-profile']) {
  const { profile } = await inspector!.post('Profiler.stop');
  writeFileSync(args['cpu-profile'], JSON.stringify(profile));
}
if (args['heap-sample']) {
  interface Node {
    callFrame: { functionName: string; url: string; lineNumber: number };
    selfSize: number;
    children: Node[];
  }
  const { profile } = (await inspector!.post('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (n: Node) => {
    const f = n.callFrame;
    const site =
      `${f.functionName || '(anonymous)'} ` +
      `${f.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${f.lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const writesSampled = WRITES * ROUNDS;
  console.log(`allocation sample: ${Math.round(total / writesSampled)} B/write; top sites by self bytes per write:`);
  for (const [site, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.log(
      `${String(Math.round(b / writesSampled)).padStart(7)} B  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${site}`,
    );
}
await store.close();
rmSync(dir, { recursive: true, force: true });
