// What one answered bot event costs the server's CPU, part by part, in one process and without
// sockets: a server built as `serve` builds it (startServer, file store on /dev/shm, rate limits
// on as the bots-throughput bench: the people at 150 messages a minute, the bots' users with
// limits of their own, the request log at info to /dev/null, metrics on, no plugins) running 30
// bots; 980 people send keyed `POST /api/v1/messages/send` through an in-process transport of
// their own (the server's listener, as the bots' requests: no HTTP parsing, no socket), paced at
// `--rate`
// a second (2200: the bench's load, which the server cannot keep up with, so every poll and
// group commit carries many events, as in the bench). Variants, alternated round by round:
//   people   the people write to one another (no bot is concerned): a person's write alone
//   quiet    to 10 bots whose rule's condition is false: learning of the event, queueing it,
//            deciding, tracing, ending — no step
//   logs     to 10 bots whose rule logs the text: a step without write-ahead or request
//   bots     to the 10 echo bots (as the bench): the round ends when every echo is committed
//   reply    the echo bots' users write to the people through clients as a bot's (no runtime)
//   poll     a quiet bot's `GET /api/v1/messages` finding nothing, alone, one after the other
//   bots-notrace, bots-nobudget   `bots` with a part stubbed (STUBS below), for bisecting;
//            bots-prof: `bots` with V8's CPU profiler on (what --cpu-prof costs the server)
//   before-people, before-bots, …  the same against an earlier build's server (--before DIR:
//            that build's dist/, on a copy of the same data, in this process)
// A round's figure is the process's CPU (`process.cpuUsage`, every thread) per message, from the
// first send until the last reply is committed (and durable); `bots − people` is what the bot
// side adds to an event. The counts per message: store transactions (journal lines), journal
// bytes, the bots' in-process requests, GC pause time; with --promises, promises made (an async
// hook: slower, for the count only). BOTS_CPU_KEEP=1 keeps the data directories.
//   node bin/run-ts.js bench/tools/bots-cpu.ts [--rounds 7] [--n 2000] [--rate 2200]
//     [--only people,quiet,logs,bots] [--before bench/.cache/ab/before] [--promises] [--src]
import { createHook } from 'node:async_hooks';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Session } from 'node:inspector';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { UsersMeta } from '../data/users.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { echoBot } from '../harness/bots-kit.js';
import type * as InProcessModule from '../../src/api/in-process.js';
import type * as LoadModule from '../../src/config/load.js';
import type * as LogModule from '../../src/log.js';
import type * as ServerModule from '../../src/server.js';
import type * as CollectionsModule from '../../src/domain/messaging/collections.js';
import type * as RecordsModule from '../../src/runtime/state/bot-records.js';
import type * as TracesModule from '../../src/runtime/state/traces.js';
import type * as BudgetModule from '../../src/client/rate-budget.js';
import type * as ClientModule from '../../src/client/client.js';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    n: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '2200' },
    only: { type: 'string' },
    before: { type: 'string' },
    promises: { type: 'boolean', default: false },
    src: { type: 'boolean', default: false },
  },
});
const BOTS = 10;
const PEOPLE = 980;
const rounds = Number(opts.rounds);
const perRound = Number(opts.n);
const rate = Number(opts.rate);

const say = (m: string) => process.stderr.write(`${m}\n`);
const ds = await dataset<UsersMeta>('users', { users: 3 * BOTS + PEOPLE }, say);
const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'bots-cpu-'));
const devNull = openSync('/dev/null', 'w');
const bots = ds.meta.users.slice(0, BOTS);
// bots whose one rule decides not to run (a condition that is false): what learning of an event,
// queueing it, deciding and tracing cost without a step
const quiet = ds.meta.users.slice(BOTS, 2 * BOTS);
// bots whose one rule logs the text (a step without write-ahead or request)
const loggers = ds.meta.users.slice(2 * BOTS, 3 * BOTS);
const people = ds.meta.users.slice(3 * BOTS);
const RULE_HEAD = '  - id: echo\n    on: message.received\n';
const LOG_RULE = `${RULE_HEAD}    do:\n      - log: "echo {{ event.content }}"\n`;
const REPLY = '    do:\n      - reply: "echo {{ event.content }}"\n';
const QUIET_RULE = `${RULE_HEAD}    if: { content: never }\n${REPLY}`;

type Server = Awaited<ReturnType<typeof ServerModule.startServer>>;
interface Build {
  server: Server;
  dataDir: string;
  send: InProcessModule.InProcessTransport;
  messages: () => number;
}

/** A server of the build under `at` (its dist/, or src/) on a copy of the data set, with bots. */
async function build(name: string, at: string): Promise<Build> {
  const { startServer } = (await import(`${at}/server.js`)) as typeof ServerModule;
  const { configFrom } = (await import(`${at}/config/load.js`)) as typeof LoadModule;
  const { createLogger } = (await import(`${at}/log.js`)) as typeof LogModule;
  const inProcess = (await import(`${at}/api/in-process.js`)) as typeof InProcessModule;
  const collectionsAt = `${at}/domain/messaging/collections.js`;
  const collections = (await import(collectionsAt)) as typeof CollectionsModule;
  const { inProcessTransport } = inProcess;
  const { Messages } = collections;
  const dir = join(root, name);
  const dataDir = join(dir, 'data');
  const botsDir = join(dir, 'bots');
  copyStore(ds, dataDir);
  mkdirSync(botsDir);
  for (let i = 0; i < BOTS; i++) writeFileSync(join(botsDir, `echo-${i}.yaml`), echoBot(i));
  for (let i = 0; i < BOTS; i++)
    writeFileSync(
      join(botsDir, `logs-${i}.yaml`),
      echoBot(2 * BOTS + i, { rules: LOG_RULE }).replace(/^name: echo-\d+/, `name: logs-${i}`),
    );
  for (let i = 0; i < BOTS; i++)
    writeFileSync(
      join(botsDir, `quiet-${i}.yaml`),
      echoBot(BOTS + i, { rules: QUIET_RULE }).replace(/^name: echo-\d+/, `name: quiet-${i}`),
    );
  const own = { general: 10_000_000, messages: 10_000_000, conditional: 10_000_000 };
  const config = configFrom({
    log: { level: 'info' },
    bots: { dir: botsDir, enabled: true },
    rate_limits: {
      enabled: true,
      general: { limit: 300, window: '1m' },
      messages: { limit: 150, window: '1m' },
      users: Object.fromEntries([...bots, ...quiet, ...loggers].map((u) => [u.name, own])),
    },
    plugins: { dir: join(dir, 'no-plugins') },
  });
  const server = await startServer({
    dataDir,
    config,
    port: 0,
    host: '127.0.0.1',
    log: createLogger({
      level: 'info',
      pretty: false,
      sink: pino.destination({ dest: devNull, sync: false }) as never,
    }),
  });
  // the bots' baseline is their start: a message before it is history, not an event
  for (;;) {
    const st = (await server.command!('bots.status')) as { bots: Array<{ status: string }> };
    if (st.bots.filter((x) => x.status === 'running').length === 3 * BOTS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const send = inProcessTransport(server.http.listeners('request')[0] as never, server.url);
  Msgs = Messages;
  const { BotInbox } = (await import(`${at}/runtime/state/bot-records.js`)) as typeof RecordsModule;
  inboxOf.set(server, () => server.store.read.col(BotInbox).count());
  return { server, dataDir, send, messages: () => server.store.read.col(Messages).count() };
}

const inboxOf = new Map<Server, () => number>();
let lastQuiet = { bot: '', content: '' };
/** Whether the quiet bots handled the round: their inboxes empty and the last message traced. */
async function quietDone(b: Build): Promise<boolean> {
  if (inboxOf.get(b.server)!() > 0) return false;
  const { traces } = (await b.server.command!('bots.trace', {
    name: lastQuiet.bot,
    limit: 1000,
  })) as {
    traces: Array<{ event: { summary: string } }>;
  };
  return traces.some((t) => t.event.summary.includes(`"${lastQuiet.content}"`));
}
let Msgs: typeof CollectionsModule.Messages | undefined;
const from = opts.src ? '../../src' : '../../dist';
const builds: Record<string, Build> = { main: await build('main', from) };
if (opts.before) builds.before = await build('before', resolve(opts.before, 'dist'));

const defaults = opts.before ? 'people,bots,before-people,before-bots' : 'people,quiet,logs,bots';
const names = (opts.only ?? defaults).split(',');
let seq = 0;

/** GC pause time (ms) since the last call. */
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

let promises = 0;
if (opts.promises)
  createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  }).enable();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function journalOf(b: Build): { lines: number; bytes: number } {
  const f = join(b.dataDir, 'journal.jsonl');
  if (!existsSync(f)) return { lines: 0, bytes: 0 };
  const text = readFileSync(f);
  let lines = 0;
  for (let i = 0; i < text.length; i++) if (text[i] === 10) lines++;
  return { lines, bytes: statSync(f).size };
}

interface Out {
  cpuUs: number;
  gcUs: number;
  lines: number;
  bytes: number;
  requests: number;
  promises: number;
}

/**
 * `poll`: what a bot's poll costs the server, apart: `GET /api/v1/messages` as a quiet bot (990
 * conversations) that finds nothing new, one after the other, CPU per request.
 */
async function polls(b: Build): Promise<Out> {
  const url = `${b.server.url}/api/v1/messages?since=${Date.now()}&limit=200`;
  const headers = { 'X-API-Key': quiet[0]!.key };
  const n = Math.min(perRound, 2000);
  const c0 = process.cpuUsage();
  for (let k = 0; k < n; k++) {
    const r = await b.send({ url, method: 'GET', headers, timeoutMs: 60_000 });
    if (r.status !== 200) throw new Error(`GET /messages answered ${r.status}: ${r.text}`);
  }
  const c = process.cpuUsage(c0);
  return { cpuUs: (c.user + c.system) / n, gcUs: 0, lines: 0, bytes: 0, requests: 1, promises: 0 };
}

/**
 * Stubs for bisecting, each on for the rounds of a variant named `bots-<stub>` (the main build's
 * modules patched, then restored): what the bot side costs without that part.
 */
const { TraceLog } = (await import(`${from}/runtime/state/traces.js`)) as typeof TracesModule;
const { createRateBudget } = (await import(`${from}/client/rate-budget.js`)) as typeof BudgetModule;
const budgetProto = Object.getPrototypeOf(createRateBudget()) as {
  run: (r: unknown, fn: () => unknown) => unknown;
};
const inspector = new Session();
inspector.connect();
const post = (method: string, params?: object) =>
  new Promise<void>((ok, no) => inspector.post(method, params, (err) => (err ? no(err) : ok())));
const STUBS: Record<string, () => () => void> = {
  // not a stub: V8's CPU profiler on for the round (as the bench's server runs, --cpu-prof)
  prof: () => {
    void post('Profiler.enable').then(() => post('Profiler.start'));
    return () => void post('Profiler.stop');
  },
  // the same sampling every 10 ms instead of every 1 ms (node's --cpu-prof-interval 10000)
  prof10: () => {
    void post('Profiler.enable')
      .then(() => post('Profiler.setSamplingInterval', { interval: 10_000 }))
      .then(() => post('Profiler.start'));
    const back = () => post('Profiler.setSamplingInterval', { interval: 1000 });
    return () => void post('Profiler.stop').then(back);
  },
  // a trace kept in memory only (no file line: no JSON, no write)
  notrace: () => {
    const add = TraceLog.prototype.add;
    TraceLog.prototype.add = function (this: { ring: unknown[]; limit: number }, t: unknown) {
      this.ring.push(t);
      if (this.ring.length > this.limit) this.ring.shift();
    } as never;
    return () => void (TraceLog.prototype.add = add);
  },
  // the rate budget's queue left out: every request at once
  nobudget: () => {
    const run = budgetProto.run;
    budgetProto.run = (_r: unknown, fn: () => unknown) => fn();
    return () => void (budgetProto.run = run);
  },
};

/**
 * Sends a round's `perRound` messages at `rate` a second, the i-th (counted on over rounds) by
 * `send(i)`, and waits for every answer. Internal.
 */
async function paced(send: (i: number) => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let k = 0; k < perRound; k++) {
    const wait = t0 + (k * 1000) / rate - performance.now();
    if (wait > 2) await sleep(wait);
    sends.push(send(seq++));
  }
  await Promise.all(sends);
}

const { createClient } = (await import(`${from}/client/client.js`)) as typeof ClientModule;
const replyClients = new Map<Build, ReturnType<typeof createClient>[]>();
/**
 * `reply`: the echo bots' users write to the people through clients as the bots have them (the
 * typed client, its rate budget, the in-process transport of the server's bots; an
 * Idempotency-Key each), no runtime: what the client adds to a write over a person's.
 */
async function replies(b: Build): Promise<Out> {
  let clients = replyClients.get(b);
  if (!clients) {
    const transport = b.server.inProcess!;
    clients = bots.map((u) => createClient({ baseUrl: b.server.url, apiKey: u.key, transport }));
    replyClients.set(b, clients);
  }
  const m0 = b.messages();
  const c0 = process.cpuUsage();
  await paced((i) =>
    clients[i % BOTS]!.messages.send(
      { recipient_pin: people[i % PEOPLE]!.pin, content: `r${i}` },
      { idempotencyKey: `rp-${i}` },
    ),
  );
  await b.server.store.durable();
  const c = process.cpuUsage(c0);
  const written = b.messages() - m0;
  if (written !== perRound) throw new Error(`reply: ${written} of ${perRound} written`);
  return {
    cpuUs: (c.user + c.system) / perRound,
    gcUs: 0,
    lines: 0,
    bytes: 0,
    requests: 1,
    promises: 0,
  };
}

/** One round of a variant: `perRound` messages at `rate`/s; CPU until the last is answered. */
async function round(variant: string): Promise<Out> {
  const stub = STUBS[variant.replace(/^bots-/, '')];
  const undo = stub?.();
  try {
    return await roundOf(stub ? 'bots' : variant);
  } finally {
    undo?.();
  }
}

/** A round whose echoes did not all come within a minute: what the bots traced, who is missing. */
async function stalled(b: Build, variant: string, got: number, want: number): Promise<never> {
  const seen = new Map<string, number>();
  for (let i = 0; i < BOTS; i++) {
    const args = { name: `echo-${i}`, limit: 1000 };
    const { traces } = (await b.server.command!('bots.trace', args)) as {
      traces: Array<{ outcome: string; reason?: string }>;
    };
    for (const { outcome, reason } of traces) {
      const k = `${outcome}/${reason}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
  }
  type Row = { sender_id: string; content: string };
  const all = [...b.server.store.read.col(Msgs!).all()] as Row[];
  const botIds = new Set(bots.map((x) => x.id));
  const fromBots = all.filter((m) => botIds.has(m.sender_id));
  const replied = new Set(fromBots.map((m) => m.content.slice(5)));
  const asked = all.filter((m) => !botIds.has(m.sender_id) && /^m\d+$/.test(m.content));
  const missing = asked.filter((m) => !replied.has(m.content));
  process.stderr.write(`missing: ${missing.map((m) => m.content).join(' ')}\n`);
  process.stderr.write(`${JSON.stringify(await b.server.command!('bots.status'))}\n`);
  throw new Error(`${variant}: ${got} of ${want} messages after 60 s; ${[...seen]}`);
}

async function roundOf(variant: string): Promise<Out> {
  const b = variant.startsWith('before-') ? builds.before! : builds.main!;
  if (variant.endsWith('poll')) return polls(b);
  if (variant.endsWith('reply')) return replies(b);
  const toBots = variant.endsWith('bots');
  const toLogs = variant.endsWith('logs');
  const toQuiet = variant.endsWith('quiet') || toLogs;
  const silent = toLogs ? loggers : quiet;
  const m0 = b.messages();
  const j0 = journalOf(b);
  const r0 = b.server.inProcess?.served ?? 0;
  const p0 = promises;
  gcMs = 0;
  const c0 = process.cpuUsage();
  await paced((i) => {
    const person = people[i % PEOPLE]!;
    const to = toBots
      ? bots[Math.floor(i / PEOPLE) % BOTS]!
      : toQuiet
        ? silent[Math.floor(i / PEOPLE) % BOTS]!
        : people[(i + 1) % PEOPLE]!;
    if (toQuiet)
      lastQuiet = {
        bot: `${toLogs ? 'logs' : 'quiet'}-${Math.floor(i / PEOPLE) % BOTS}`,
        content: `m${i}`,
      };
    return b
      .send({
        url: `${b.server.url}/api/v1/messages/send`,
        method: 'POST',
        headers: {
          'X-API-Key': person.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': `bc-${i}`,
        },
        body: JSON.stringify({ recipient_pin: to.pin, content: `m${i}` }),
        timeoutMs: 60_000,
      })
      .then((r) => {
        if (r.status !== 201) throw new Error(`send answered ${r.status}: ${r.text}`);
      });
  });
  const want = m0 + perRound * (toBots ? 2 : 1);
  // the quiet bots write no message: the round ends when their inboxes are empty again
  for (let spins = 0; b.messages() < want || (toQuiet && !(await quietDone(b))); spins++) {
    if (spins > 60_000) return stalled(b, variant, b.messages() - m0, want - m0);
    await sleep(toQuiet ? 5 : 1);
  }
  await b.server.store.durable();
  const c = process.cpuUsage(c0);
  const j1 = journalOf(b);
  return {
    cpuUs: (c.user + c.system) / perRound,
    gcUs: (gcMs * 1000) / perRound,
    lines: (j1.lines - j0.lines) / perRound,
    bytes: (j1.bytes - j0.bytes) / perRound,
    requests: ((b.server.inProcess?.served ?? 0) - r0) / perRound,
    promises: (promises - p0) / perRound,
  };
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const all: Record<string, Out[]> = Object.fromEntries(names.map((n) => [n, []]));
const list = (xs: number[], d = 0) => xs.map((x) => x.toFixed(d)).join(' ');
// warm-up: one round each, not counted
for (const v of names) await round(v);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...names].reverse() : names;
  for (const v of order) all[v]!.push(await round(v));
  const last = (v: string) => all[v]!.at(-1)!;
  const each = names.map((v) => `${v} ${last(v).cpuUs.toFixed(0)} (GC ${last(v).gcUs.toFixed(0)})`);
  const heap = (process.memoryUsage().heapUsed / 1e6).toFixed(0);
  process.stderr.write(`round ${r + 1}: ${each.join(', ')} µs/msg; heap ${heap} MB\n`);
}
const line = (v: string) => {
  const o = all[v]!;
  const m = (f: (x: Out) => number, d = 0) => med(o.map(f)).toFixed(d);
  const promised = opts.promises ? `, promises ${m((x) => x.promises, 1)}` : '';
  return (
    `${v.padEnd(14)} CPU ${m((x) => x.cpuUs).padStart(5)} µs/msg ` +
    `(${list(o.map((x) => x.cpuUs))}), ` +
    `GC ${m((x) => x.gcUs)} µs, journal ${m((x) => x.lines, 2)} lines ${m((x) => x.bytes)} B, ` +
    `bots' requests ${m((x) => x.requests, 2)}${promised}`
  );
};
console.log(`${perRound} messages a round at ${rate}/s, ${rounds} rounds, medians:`);
for (const v of names) console.log(line(v));
for (const pre of ['', 'before-']) {
  if (!all[`${pre}bots`] || !all[`${pre}people`]) continue;
  const d = all[`${pre}bots`]!.map((x, i) => x.cpuUs - all[`${pre}people`]![i]!.cpuUs);
  const what = `${pre}bots − ${pre}people`;
  console.log(`${what}: ${med(d).toFixed(0)} µs per answered event (${list(d)})`);
}
if (all.bots && all['before-bots']) {
  const q = all.bots.map((x, i) => x.cpuUs / all['before-bots']![i]!.cpuUs);
  console.log(`bots ÷ before-bots: ${med(q).toFixed(3)} (${list(q, 2)})`);
}
for (const b of Object.values(builds)) await b.server.close();
if (!process.env.BOTS_CPU_KEEP) rmSync(root, { recursive: true, force: true });
else console.log(`kept ${root}`);
process.exit(0);
