// What pinbot's own JavaScript costs a `GET /api/v1/me`, without sockets, the kernel or a load
// generator: the server is built as `serve` builds it (startServer over a copy of the read bench's
// users-100 data set, config as the read bench's `serve` row), then its node request listener is
// driven in a loop with node's own IncomingMessage and the server's response class over a stand-in
// socket (one per "connection", each with its own user's key, as the bench's connections), and the
// process's CPU per request is timed (`process.cpuUsage`), variants alternated round by round.
// The same harness drives bare node:http's handler (a Map lookup and JSON.stringify, as
// bench/baselines/node-read.ts) on node's plain response: the difference is pinbot's part.
//   node bin/run-ts.js bench/tools/edge-micro.ts [--rounds 7] [--n 50000] [--only serve,node]
//     [--src] [--before bench/.cache/ab/before] [--plugins] (load the repository's plugins/, as serve does: an AsyncLocalStorage runs)
//     [--alloc] (also the bytes each variant allocates a request, the same on a busy machine as
//     on a quiet one; the young generation must hold a round without a scavenge: run as
//     node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 bin/run-ts.js bench/tools/edge-micro.ts --alloc)
// Variants: serve (the server's listener), node (node-read's handler), node-edge (the same on
// EdgeResponse), and the `serve` listener with one part stubbed (see STUBS below), for bisecting.
import { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { UsersMeta } from '../data/users.js';
import { nodeReadHandler } from '../baselines/node-read-handler.js';
import { copyStore, dataset } from '../harness/dataset.js';
import type * as ResponseModule from '../../src/api/edge/response.js';
import type * as LoadModule from '../../src/config/load.js';
import type * as LogModule from '../../src/log.js';
import type * as ServerModule from '../../src/server.js';
import type * as AppModule from '../../src/api/app.js';
import type * as FrontModule from '../../src/api/edge/front.js';
import type * as CallModule from '../../src/api/edge/call.js';
import type * as LogRequestModule from '../../src/api/edge/request-log.js';
import type * as AuthModule from '../../src/api/edge/auth.js';
import type * as KeysModule from '../../src/domain/users/keys.js';
import { StandInSocket, youngGrowth } from './stand-in-socket.js';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    n: { type: 'string', default: '50000' },
    only: { type: 'string' },
    plugins: { type: 'boolean', default: false },
    limits: { type: 'string', default: 'on' },
    metrics: { type: 'string', default: 'on' },
    src: { type: 'boolean', default: false },
    before: { type: 'string' },
    alloc: { type: 'boolean', default: false },
    hooks: { type: 'boolean', default: false },
  },
});
// dist/ (as `serve` runs: tsc's output; build it first), or src/ through tsx with --src (whose
// esbuild output differs: a `__name` call per closure made)
const from = opts.src ? '../../src' : '../../dist';
const { EdgeResponse } = (await import(`${from}/api/edge/response.js`)) as typeof ResponseModule;
const { configFrom } = (await import(`${from}/config/load.js`)) as typeof LoadModule;
const { createLogger } = (await import(`${from}/log.js`)) as typeof LogModule;
const { startServer } = (await import(`${from}/server.js`)) as typeof ServerModule;
const rounds = Number(opts.rounds);
const perRound = Number(opts.n);
const CONNECTIONS = 50;

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
type ResponseClass = new (req: IncomingMessage) => ServerResponse;

/** One request on `socket`, as node's server makes and ends it (http_server.js parserOnIncoming, resOnFinish). */
function oneRequest(socket: StandInSocket, key: string, listener: Listener, Res: ResponseClass): void {
  const req = new IncomingMessage(socket as never);
  req.method = 'GET';
  req.url = '/api/v1/me';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.headers = { host: '127.0.0.1:3000', 'x-api-key': key, connection: 'keep-alive' };
  req.rawHeaders = ['Host', '127.0.0.1:3000', 'X-API-Key', key, 'Connection', 'keep-alive'];
  req.complete = true;
  req.push(null);
  const res = new Res(req);
  res.shouldKeepAlive = true;
  res.assignSocket(socket as never);
  res.on('finish', () => {
    res.detachSocket(socket as never);
    process.nextTick(() => {
      res.destroyed = true;
      (res as unknown as { _closed: boolean })._closed = true;
      res.emit('close');
    });
  });
  listener(req, res);
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `n` requests over the sockets, a round of one request per socket at a time; CPU µs per request. */
async function drive(n: number, sockets: StandInSocket[], keys: string[], listener: Listener, Res: ResponseClass) {
  const before = process.cpuUsage();
  const t0 = performance.now();
  for (let done = 0; done < n; done += sockets.length) {
    for (let i = 0; i < sockets.length; i++) oneRequest(sockets[i]!, keys[i]!, listener, Res);
    await tick();
    for (const s of sockets) for (const cb of s.callbacks.splice(0)) cb();
    await tick();
  }
  const cpu = process.cpuUsage(before);
  return { cpu: (cpu.user + cpu.system) / n, wall: ((performance.now() - t0) * 1000) / n };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const ds = await dataset<UsersMeta>('users', { users: 100 }, (m) => console.log(m));
const dir = mkdtempSync(join(tmpdir(), 'edge-micro-'));
copyStore(ds, join(dir, 'data'));
const config = configFrom({
  rate_limits:
    opts.limits === 'on' ? { enabled: true, general: { limit: 1_000_000_000, window: '1m' } } : { enabled: false },
  log: { level: 'info' },
  metrics: { enabled: opts.metrics === 'on' },
  ...(opts.plugins ? {} : { plugins: { dir: join(dir, 'no-plugins') } }),
});
const server = await startServer({
  dataDir: join(dir, 'data'),
  config,
  port: 0,
  host: '127.0.0.1',
  bots: false,
  log: createLogger({ level: 'info', pretty: false }),
});
const serveListener = server.http.listeners('request')[0] as Listener;
// --before DIR: an earlier build's server (DIR/dist, as read-features.ts --before) on a copy of
// the same data, in this process: variant `before`, an A/B of the two builds' own work
let beforeServer: Awaited<ReturnType<typeof startServer>> | undefined;
let beforeRes: ResponseClass | undefined;
if (opts.before) {
  const at = resolve(opts.before, 'dist');
  const start = ((await import(`${at}/server.js`)) as typeof ServerModule).startServer;
  beforeRes = ((await import(`${at}/api/edge/response.js`)) as typeof ResponseModule).EdgeResponse as never;
  copyStore(ds, join(dir, 'before'));
  beforeServer = await start({
    dataDir: join(dir, 'before'),
    config: ((await import(`${at}/config/load.js`)) as typeof LoadModule).configFrom(config),
    port: 0,
    host: '127.0.0.1',
    bots: false,
    log: ((await import(`${at}/log.js`)) as typeof LogModule).createLogger({ level: 'info', pretty: false }),
  });
}
const users = ds.meta.users.slice(0, CONNECTIONS);
const keys = users.map((u) => u.key);
const byKey = new Map(users.map((u) => [u.key, { id: u.id, display_name: u.name, pin_code: u.pin }]));
const nodeRead: Listener = nodeReadHandler(users);

const { createApp } = (await import(`${from}/api/app.js`)) as typeof AppModule;
const { front } = (await import(`${from}/api/edge/front.js`)) as typeof FrontModule;
const { compileTrust } = (await import(`${from}/api/edge/call.js`)) as typeof CallModule;
const { requestLog } = (await import(`${from}/api/edge/request-log.js`)) as typeof LogRequestModule;
const { authGate } = (await import(`${from}/api/edge/auth.js`)) as typeof AuthModule;
const { KeyUsage } = (await import(`${from}/domain/users/keys.js`)) as typeof KeysModule;

/** The server's listener over the same store, with another config (rate limits, metrics). */
const appWith = (limits: boolean, metricsOn: boolean): Listener =>
  createApp({
    store: server.store,
    commits: server.deployment.commits,
    env: {
      clock: server.env.clock,
      config: configFrom({
        rate_limits: limits ? { enabled: true, general: { limit: 1_000_000_000, window: '1m' } } : { enabled: false },
        log: { level: 'info' },
        metrics: { enabled: metricsOn },
      }),
    },
    log: server.log,
  }).listener;

/** The front alone (call, request id and log, Date), `api` answering from a Map as node-read does. */
const frontOnly = (auth: boolean): Listener => {
  const authenticate = authGate(server.store.read, new KeyUsage(), server.env.clock);
  const answer = (call: Parameters<Parameters<typeof front>[0]['api']>[0]) => {
    const u = call.user!;
    call.sendJson(200, JSON.stringify({ id: u.id, display_name: u.display_name, pin_code: u.pin_code }));
  };
  return front({
    trust: compileTrust(false),
    logRequest: requestLog(server.log),
    api: auth
      ? (call, _path, next) => void (authenticate(call, next) === true && answer(call))
      : (call, _path, next) => {
          const found = byKey.get(call.header('x-api-key') ?? '');
          if (!found) return next(new Error('no such key'));
          call.sendJson(200, JSON.stringify(found));
        },
    anonymous: (_call, next) => next(),
    giveBack: () => undefined,
    services: [],
    mounts: [],
    fail: (call) => call.sendJson(500, '{}'),
  });
};

/** node-read's answer with the three fields of pinbot's (request id, the two RateLimit fields) as a list. */
const nodeFields: Listener = (req, res) => {
  const user = byKey.get((req.headers['x-api-key'] as string | undefined) ?? '');
  const body = JSON.stringify(user);
  res.writeHead(200, [
    'X-Request-Id',
    'e3c62be0-b8ca-4b0c-b4d1-e45aa414954f',
    'RateLimit',
    '"general"; r=999999999; t=60',
    'RateLimit-Policy',
    '"general"; q=1000000000; w=60; pk=:ZDI0OGVmOWIzYzZi:',
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
};

const VARIANTS: Record<string, { listener: Listener; Res: ResponseClass }> = {
  'node-fields': { listener: nodeFields, Res: ServerResponse as unknown as ResponseClass },
  node: { listener: nodeRead, Res: ServerResponse as unknown as ResponseClass },
  'node-edge': { listener: nodeRead, Res: EdgeResponse as unknown as ResponseClass },
  front: { listener: frontOnly(false), Res: EdgeResponse as unknown as ResponseClass },
  'front-auth': { listener: frontOnly(true), Res: EdgeResponse as unknown as ResponseClass },
  bare: { listener: appWith(false, false), Res: EdgeResponse as unknown as ResponseClass },
  limits: { listener: appWith(true, false), Res: EdgeResponse as unknown as ResponseClass },
  serve: { listener: serveListener, Res: EdgeResponse as unknown as ResponseClass },
  ...(beforeServer
    ? { before: { listener: beforeServer.http.listeners('request')[0] as Listener, Res: beforeRes! } }
    : {}),
};
const names = opts.only ? opts.only.split(',') : ['node', 'front', 'front-auth', 'bare', 'limits', 'serve'];
const sockets = Object.fromEntries(
  names.map((v) => [v, keys.map(() => new StandInSocket(v === 'before' ? beforeServer!.http : server.http))]),
);

// a check: the answers are what they should be
{
  const s = new StandInSocket(server.http);
  const chunks: string[] = [];
  s.write = (data: string | Buffer, _e?: unknown, cb?: () => void) => {
    chunks.push(String(data));
    if (typeof cb === 'function') s.callbacks.push(cb);
    return true;
  };
  oneRequest(s, keys[0]!, serveListener, EdgeResponse as unknown as ResponseClass);
  await tick();
  console.log(chunks.join('').replace(/\r\n/g, '\n  '));
}

for (const v of names) await drive(20_000, sockets[v]!, keys, VARIANTS[v]!.listener, VARIANTS[v]!.Res);
const cpu: Record<string, number[]> = Object.fromEntries(names.map((v) => [v, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? names : [...names].reverse();
  for (const v of order) {
    const out = await drive(perRound, sockets[v]!, keys, VARIANTS[v]!.listener, VARIANTS[v]!.Res);
    cpu[v]!.push(out.cpu);
  }
}
const base = cpu.node ? median(cpu.node) : undefined;
for (const v of names) {
  const m = median(cpu[v]!);
  const extra = base === undefined ? '' : `   ${(m - base).toFixed(2)} µs above node`;
  const low = Math.min(...cpu[v]!);
  console.log(
    `${v.padEnd(12)} ${m.toFixed(2)} µs/req, least ${low.toFixed(2)} ` +
      `(rounds ${cpu[v]!.map((x) => x.toFixed(1)).join(' ')})${extra}`,
  );
}
// --alloc: the young generation's growth over 20,000 requests, after a full collection (a round
// in which a scavenge ran shows as negative or tiny and is left out)
if (opts.alloc) {
  for (const v of names) {
    const drives = (n: number) => drive(n, sockets[v]!, keys, VARIANTS[v]!.listener, VARIANTS[v]!.Res);
    const per = await youngGrowth(20_000, drives);
    console.log(
      `${v.padEnd(12)} allocates ${per.length ? median(per).toFixed(0) : '?'} bytes/req (rounds ${per.map((x) => x.toFixed(0)).join(' ')})`,
    );
  }
}
// --hooks: the async resources each variant makes a request, by type (each one an init hook to
// run while an AsyncLocalStorage is on: Node 20 runs one for every resource once a storage ran)
if (opts.hooks) {
  const { createHook } = await import('node:async_hooks');
  for (const v of names) {
    const counts = new Map<string, number>();
    const hook = createHook({ init: (_id, type) => void counts.set(type, (counts.get(type) ?? 0) + 1) });
    hook.enable();
    await drive(5_000, sockets[v]!, keys, VARIANTS[v]!.listener, VARIANTS[v]!.Res);
    hook.disable();
    const per = [...counts].map(([t, n]) => `${t} ${(n / 5_000).toFixed(2)}`).join(', ');
    console.log(`${v.padEnd(12)} async resources a request: ${per}`);
  }
}
// the per-round ratio to `before` (measured in the same round, a moment apart): steadier than
// the medians when the machine's load moves
if (cpu.before && cpu.serve) {
  const r = cpu.serve.map((x, i) => x / cpu.before![i]!);
  console.log(`serve ÷ before   ${median(r).toFixed(3)} (rounds ${r.map((x) => x.toFixed(2)).join(' ')})`);
}
await server.close();
await beforeServer?.close();
rmSync(dir, { recursive: true, force: true });
