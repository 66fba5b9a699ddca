// Issue 33 item 2: what pinbot's own JavaScript costs a keyed durable write, without sockets, the
// kernel's TCP or a load generator — the write's answer to edge-micro.ts. The server is built as
// `serve` builds it for the write bench (startServer over a copy of the write bench's store, rate
// limits on with limits no load reaches, the request log at info, metrics on, the repository's
// plugins/ loaded: an AsyncLocalStorage has run, so every promise costs async hooks on Node 20),
// its data directory on /dev/shm (tmpfs: an fdatasync is a no-op and an append a copy, so the
// figures are the CPU's, not the disk's; --dir to put it elsewhere). Its node request listener is
// then driven in a loop with node's own IncomingMessage (the ~100-byte JSON body of the write
// bench pushed into it) and the server's response class over a stand-in socket, `--connections`
// writes in flight (one per "connection", each as its own user into its own direct conversation,
// each with an Idempotency-Key of its own, as the write bench sends them); the process's CPU per
// write (`process.cpuUsage`: every thread, the pool's fdatasync calls too) is timed, variants
// alternated round by round.
//   node bin/run-ts.js bench/tools/write-micro.ts [--rounds 7] [--n 20000] [--only serve,plain]
//     [--before DIR] (variant `before`: an earlier build's server, DIR/dist, on a copy of the data)
//     [--plugins off] (load no plugins: no AsyncLocalStorage in the process; the variants apart from it stay)
//     [--count] (also the promises and other async resources each variant makes a write, by type)
//     [--cpu-profile FILE --profile serve,plain] (FILE.VARIANT.ROUND.cpuprofile: a CPU profile of
//     each round of those variants, summed up by area — store, idempotency, domain, pipeline, the
//     edge's parts, node, GC, async hooks — in µs a write; and for
//     bench/tools/profile-summary.ts: the main thread is busy nearly all the time here, so the
//     wall-time sampling of V8's profiler reads as CPU)
//     [--alloc] (bytes allocated a write: run as node --expose-gc --min-semi-space-size=256
//     --max-semi-space-size=256 bin/run-ts.js bench/tools/write-micro.ts --alloc)
// The request log goes to stdout, as serve's: the table goes to stderr (run with >/dev/null).
// Variants: serve (the server's listener, keyed), plain (the same, no key), app (the app made again
// over the same store, keyed: what the next three are read against), nolimits / nometrics / nolog
// (that app with that part off), node (a node:http
// handler doing what Fastify's baseline does: body, JSON.parse, the key in a Map, a 200-byte line
// through the baselines' group commit on the same file system, the answer), before.
import { createHook } from 'node:async_hooks';
import { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { MessagesMeta } from '../data/messages.js';
import { groupCommit, journalLine } from '../baselines/group-commit.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { MESSAGE_BODY, SMALL_STORE } from '../harness/messages-load.js';
import type * as ResponseModule from '../../src/api/edge/response.js';
import type * as LoadModule from '../../src/config/load.js';
import type * as LogModule from '../../src/log.js';
import type * as ServerModule from '../../src/server.js';
import type * as AppModule from '../../src/api/app.js';
import { StandInSocket, youngGrowth } from './stand-in-socket.js';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    n: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    plugins: { type: 'string', default: 'on' },
    dir: { type: 'string', default: '/dev/shm' },
    before: { type: 'string' },
    count: { type: 'boolean', default: false },
    'cpu-profile': { type: 'string' },
    profile: { type: 'string', default: 'serve' },
    alloc: { type: 'boolean', default: false },
  },
});
const out = (line: string) => process.stderr.write(`${line}\n`);
const from = '../../dist';
const { EdgeResponse } = (await import(`${from}/api/edge/response.js`)) as typeof ResponseModule;
const { configFrom } = (await import(`${from}/config/load.js`)) as typeof LoadModule;
const { createLogger } = (await import(`${from}/log.js`)) as typeof LogModule;
const { startServer } = (await import(`${from}/server.js`)) as typeof ServerModule;
const { createApp } = (await import(`${from}/api/app.js`)) as typeof AppModule;
const rounds = Number(opts.rounds);
const perRound = Number(opts.n);
const CONNECTIONS = Number(opts.connections);

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
type ResponseClass = new (req: IncomingMessage) => ServerResponse;
interface Seat {
  path: string;
  key: string;
  socket: StandInSocket;
}

const BODY = Buffer.from(MESSAGE_BODY);
let keys = 0;
let failed = 0;

/** One write on its seat's socket, as node's server makes and ends it; `done` once finished. */
function oneRequest(seat: Seat, listener: Listener, Res: ResponseClass, keyed: boolean, done: () => void): void {
  const req = new IncomingMessage(seat.socket as never);
  req.method = 'POST';
  req.url = seat.path;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  const length = String(BODY.length);
  const headers: Record<string, string> = {
    host: '127.0.0.1:3000',
    'x-api-key': seat.key,
    'content-type': 'application/json',
    'content-length': length,
    connection: 'keep-alive',
  };
  const raw = ['Host', '127.0.0.1:3000', 'X-API-Key', seat.key, 'Content-Type', 'application/json'];
  raw.push('Content-Length', length, 'Connection', 'keep-alive');
  if (keyed) {
    const k = `wm-${process.pid}-${++keys}`;
    headers['idempotency-key'] = k;
    raw.push('Idempotency-Key', k);
  }
  req.headers = headers;
  req.rawHeaders = raw;
  req.push(BODY);
  req.push(null);
  req.complete = true;
  const res = new Res(req);
  res.shouldKeepAlive = true;
  res.assignSocket(seat.socket as never);
  res.on('finish', () => {
    if (res.statusCode !== 201) failed++;
    res.detachSocket(seat.socket as never);
    process.nextTick(() => {
      res.destroyed = true;
      (res as unknown as { _closed: boolean })._closed = true;
      res.emit('close');
    });
    done();
  });
  listener(req, res);
}

interface Variant {
  listener: Listener;
  Res: ResponseClass;
  keyed: boolean;
  seats: Seat[];
}

/** `n` writes, one in flight per seat (a seat sends its next once its last is answered); CPU µs a write. */
function drive(n: number, v: Variant): Promise<{ cpu: number; wall: number }> {
  const before = process.cpuUsage();
  const t0 = performance.now();
  let started = 0;
  let finished = 0;
  return new Promise((resolveAll) => {
    const next = (seat: Seat) => {
      if (started >= n) {
        if (finished === n) {
          const cpu = process.cpuUsage(before);
          resolveAll({ cpu: (cpu.user + cpu.system) / n, wall: ((performance.now() - t0) * 1000) / n });
        }
        return;
      }
      started++;
      oneRequest(seat, v.listener, v.Res, v.keyed, () => {
        finished++;
        setImmediate(() => next(seat));
      });
    };
    for (const seat of v.seats) next(seat);
  });
}

/** A V8 CPU profile, as the inspector gives it. */
interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** The area of a frame of pinbot's (by its file under dist/), the harness's or node's; undefined for a native frame. */
function areaOf(url: string, fn: string): string | null | undefined {
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(idle)' || fn === '(program)') return null;
  const at = url.indexOf('/dist/');
  if (at === -1) {
    if (url.includes('write-micro')) return 'harness (request made, stand-in socket)';
    if (url.includes('async_hooks')) return 'async hooks (an AsyncLocalStorage has run)';
    if (url.startsWith('node:') && fn === 'processImmediate') return 'node: the event loop';
    return undefined; // node's own code and native frames: the area of the pinbot frame above
  }
  const f = url.slice(at + 6);
  const table: Array<[string, string]> = [
    ['store/file/journal-line', 'store: journal line (JSON of the change set, CRC-32)'],
    ['store/file/', 'store: group commit, journal write and fdatasync calls'],
    ['store/', 'store: engine, collections, indexes, commit feed'],
    ['api/writes/', 'idempotency: claim (2 SHA-256), fingerprint, outcome'],
    ['domain/', 'domain: postMessage, quotas, toMessage'],
    ['api/messaging/', 'domain: postMessage, quotas, toMessage'],
    ['api/route-pipeline', 'route pipeline: steps, body, validation, write half'],
    ['api/validation', 'route pipeline: steps, body, validation, write half'],
    ['api/route-table', 'edge: route table'],
    ['api/edge/request-log', 'edge: request log'],
    ['log', 'edge: request log'],
    ['api/edge/window-limiter', 'edge: rate limits'],
    ['api/edge/rate-limit', 'edge: rate limits'],
    ['api/edge/clock-rate-store', 'edge: rate limits'],
    ['api/edge/auth', 'edge: auth'],
    ['api/', 'edge: front, call, answer head (node writeHead)'],
    ['telemetry/', 'metrics'],
  ];
  for (const [prefix, area] of table) if (f.startsWith(prefix)) return area;
  return 'util, clock, ids';
}

/** µs of busy samples by area; a sample of node's or native code counts for the pinbot frame above it. */
function areasOf(p: Profile): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const out = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    let n = byId.get(p.samples[i]!);
    let area = n && areaOf(n.callFrame.url, n.callFrame.functionName);
    while (n && area === undefined) {
      const up = parent.get(n.id);
      n = up === undefined ? undefined : byId.get(up);
      area = n
        ? areaOf(n.callFrame.url, n.callFrame.functionName)
        : 'node, no pinbot frame above (ticks, timers, microtasks)';
    }
    if (area) out.set(area, (out.get(area) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, (m) => out(m));
const dir = mkdtempSync(join(opts.dir, 'write-micro-'));
const AS_SERVE = {
  rate_limits: {
    enabled: true,
    general: { limit: 1_000_000_000, window: '1m' },
    messages: { limit: 1_000_000_000, window: '1m' },
  },
  log: { level: 'info' },
  metrics: { enabled: true },
  // the loop writes ~20,000 messages into each conversation: past the default cap of 10,000 the
  // oldest would leave the store on every write, a cost the bench's runs never reach
  quotas: { messages_per_conversation: 100_000_000, bytes_per_user: 1_000_000_000 },
};
const config = configFrom({ ...AS_SERVE, ...(opts.plugins === 'on' ? {} : { plugins: { dir: join(dir, 'none') } }) });
const started = async (at: string | undefined, data: string) => {
  const root = at ? resolve(at, 'dist') : resolve(import.meta.dirname, from);
  const start = ((await import(`${root}/server.js`)) as typeof ServerModule).startServer;
  const cfg = ((await import(`${root}/config/load.js`)) as typeof LoadModule).configFrom(config);
  const log = ((await import(`${root}/log.js`)) as typeof LogModule).createLogger({ level: 'info', pretty: false });
  copyStore(ds, join(dir, data));
  const server = await start({ dataDir: join(dir, data), config: cfg, port: 0, host: '127.0.0.1', bots: false, log });
  const Res = ((await import(`${root}/api/edge/response.js`)) as typeof ResponseModule).EdgeResponse;
  return { server, Res: Res as unknown as ResponseClass };
};
const main = await started(undefined, 'data');
const server = main.server;
const before = opts.before ? await started(opts.before, 'before') : undefined;

/** The server's listener over the same store, with another config or logger. */
const appWith = (change: Record<string, unknown>, level = 'info'): Listener =>
  createApp({
    store: server.store,
    commits: server.deployment.commits,
    env: { clock: server.env.clock, config: configFrom({ ...AS_SERVE, ...change }) },
    log: level === 'info' ? server.log : createLogger({ level, pretty: false }),
  }).listener;

/** What Fastify's write baseline does (bench/baselines/fastify-write.ts), on node:http. */
const journal = await groupCommit(join(dir, 'node-journal.log'));
const byKey = new Map(ds.meta.users.map((u) => [u.key, u.id]));
let seq = 0;
const nodeWrite: Listener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { content?: unknown };
    const userId = byKey.get((req.headers['x-api-key'] as string | undefined) ?? '');
    if (!userId) return void res.writeHead(401).end();
    const content = String(body.content ?? '');
    const id = ++seq;
    const conversation = req.url!.split('/')[4];
    void journal.append(journalLine(id, userId, content)).then(() => {
      const text = JSON.stringify({ id, conversation_id: conversation, content });
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length });
      res.end(text);
    });
  });
};

const seatsFor = (socketServer: unknown): Seat[] =>
  Array.from({ length: Math.min(CONNECTIONS, ds.meta.direct.length) }, (_, i) => ({
    path: `/api/v1/conversations/${ds.meta.direct[i]}/messages`,
    key: ds.meta.users[2 * i]!.key,
    socket: new StandInSocket(socketServer, 'next-tick'),
  }));
const Edge = EdgeResponse as unknown as ResponseClass;
const serveListener = server.http.listeners('request')[0] as Listener;
const make = (listener: Listener, keyed = true, Res = Edge, at: unknown = server.http): Variant => ({
  listener,
  Res,
  keyed,
  seats: seatsFor(at),
});
const VARIANTS: Record<string, () => Variant> = {
  serve: () => make(serveListener),
  plain: () => make(serveListener, false),
  // the app made again over the same store as serve's config: the reference of the three below
  app: () => make(appWith({})),
  nolimits: () => make(appWith({ rate_limits: { enabled: false } })),
  nometrics: () => make(appWith({ metrics: { enabled: false } })),
  nolog: () => make(appWith({}, 'warn')),
  node: () => make(nodeWrite, false, ServerResponse as unknown as ResponseClass),
  ...(before
    ? {
        before: () =>
          make(before.server.http.listeners('request')[0] as Listener, true, before.Res, before.server.http),
      }
    : {}),
};
const names = opts.only ? opts.only.split(',') : ['node', 'serve', 'plain', 'app', 'nolimits', 'nometrics', 'nolog'];
const variants = Object.fromEntries(names.map((n) => [n, VARIANTS[n]!()]));

// a check: the answer is what it should be
{
  const s = seatsFor(server.http)[0]!;
  const chunks: string[] = [];
  s.socket.write = (data: string | Buffer, _e?: unknown, cb?: () => void) => {
    chunks.push(String(data));
    if (typeof cb === 'function') process.nextTick(cb);
    return true;
  };
  await new Promise<void>((done) => oneRequest(s, serveListener, Edge, true, done));
  out(chunks.join('').replace(/\r\n/g, '\n  '));
}

for (const v of names) await drive(Math.min(perRound, 5000), variants[v]!); // warm-up
const cpu: Record<string, number[]> = Object.fromEntries(names.map((v) => [v, []]));
const inspector = opts['cpu-profile'] ? new Session() : undefined;
const areas: Record<string, Map<string, number[]>> = Object.fromEntries(names.map((v) => [v, new Map()]));
if (inspector) {
  inspector.connect();
  await inspector.post('Profiler.enable');
}
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? names : [...names].reverse();
  for (const v of order) {
    const profiled = inspector && opts.profile.split(',').includes(v);
    if (profiled) await inspector.post('Profiler.start');
    const o = await drive(perRound, variants[v]!);
    if (profiled) {
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(`${opts['cpu-profile']}.${v}.${r}.cpuprofile`, JSON.stringify(profile));
      for (const [area, us] of areasOf(profile as unknown as Profile))
        areas[v]!.set(area, [...(areas[v]!.get(area) ?? []), us / perRound]);
    }
    cpu[v]!.push(o.cpu);
  }
}
const base = cpu.node ? median(cpu.node) : undefined;
out(
  `CPU µs a write (median of ${rounds} rounds × ${perRound} writes, ${CONNECTIONS} in flight, data on ${opts.dir}, plugins ${opts.plugins})`,
);
for (const v of names) {
  const m = median(cpu[v]!);
  const extra = base === undefined ? '' : `   ${(m - base).toFixed(1)} above node`;
  out(
    `${v.padEnd(10)} ${m.toFixed(1)}, least ${Math.min(...cpu[v]!).toFixed(1)} (rounds ${cpu[v]!.map((x) => x.toFixed(1)).join(' ')})${extra}`,
  );
}
for (const [v, byArea] of Object.entries(areas)) {
  if (byArea.size === 0) continue;
  const rows = [...byArea].map(([a, us]) => [a, median(us)] as const).sort((x, y) => y[1] - x[1]);
  const total = rows.reduce((t, [, us]) => t + us, 0);
  out(
    `${v}: the profile's busy samples by area, µs a write (median of the profiled rounds; ${total.toFixed(1)} in all)`,
  );
  for (const [a, us] of rows)
    out(`  ${us.toFixed(1).padStart(5)}  ${((100 * us) / total).toFixed(1).padStart(4)}%  ${a}`);
}
if (cpu.before && cpu.serve) {
  const r = cpu.serve.map((x, i) => x / cpu.before![i]!);
  out(`serve ÷ before   ${median(r).toFixed(3)} (rounds ${r.map((x) => x.toFixed(2)).join(' ')})`);
}
// --count: the async resources (promises, ticks, immediates, …) a write makes, by type
if (opts.count) {
  for (const v of names) {
    const counts = new Map<string, number>();
    const hook = createHook({ init: (_id, type) => void counts.set(type, (counts.get(type) ?? 0) + 1) });
    const n = 5000;
    hook.enable();
    await drive(n, variants[v]!);
    hook.disable();
    const per = [...counts].sort((a, b) => b[1] - a[1]).map(([t, c]) => `${t} ${(c / n).toFixed(2)}`);
    out(`${v.padEnd(10)} async resources a write: ${per.join(', ')}`);
  }
}
// --alloc: the young generation's growth over 5,000 writes after a full collection (a round in
// which a scavenge ran shows as negative or tiny and is left out)
if (opts.alloc) {
  for (const v of names) {
    const per = await youngGrowth(5000, (n) => drive(n, variants[v]!));
    out(
      `${v.padEnd(10)} allocates ${per.length ? median(per).toFixed(0) : '?'} bytes a write (rounds ${per.map((x) => x.toFixed(0)).join(' ')})`,
    );
  }
}
if (failed > 0) out(`${failed} writes were not answered 201: the figures are not a write's`);
await server.close();
await before?.server.close();
rmSync(dir, { recursive: true, force: true });
