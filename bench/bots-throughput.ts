import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { callAdmin } from '../src/admin/socket.js';
import { Messages } from '../src/domain/messaging/collections.js';
import { BotLeases } from '../src/deployment/bot-leases.js';
import { dataDirIntegrity } from '../src/deployment/store-integrity.js';
import { importDataDir } from '../src/deployment/store-transfer.js';
import type { ReadView } from '../src/store/core/types.js';
import { FileStore } from '../src/store/file/file-store.js';
import { PgStore } from '../src/store/postgres/pg-store.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { defineBench } from './harness/bench.js';
import { allRunning, botsRunDirs, pct, sleep } from './harness/bots-kit.js';
import type { Figure } from './harness/figure.js';
import { spawnServer, type ServerProcess } from './harness/server-process.js';

const PEOPLE = 1000;
const BOTS = 10;
/** Each person's messages a minute, and the limit they are held to (the bots' users have their own, higher). */
const PER_PERSON_PER_MIN = 132;
const PERSON_LIMIT = 150;
const SEND_S = 10;
const TARGET = { eventsPerS: 2000, p99Ms: 250 };

/** One POST over the agent's kept-alive connections; resolves with status and body. Internal. */
function post(
  agent: Agent,
  url: string,
  key: string,
  body: string,
  idempotencyKey: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey };
    const req = request(`${url}/api/v1/messages/send`, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Waits until the server's CPU over half a second is under 5% of a core (its start-up is over),
 * at most `maxMs`. Internal.
 */
async function settled(srv: ServerProcess, maxMs = 20_000): Promise<void> {
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    const c0 = srv.cpuMs();
    await sleep(500);
    const c1 = srv.cpuMs();
    if (c0 === undefined || c1 === undefined || c1 - c0 < 25) return;
  }
}

/** Bytes of the files of `dir` (the store's journal grows with every commit). Internal. */
function bytesOf(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + (statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
}

/**
 * Waits until `size()` (the bytes of the store's files, or its count of messages) has not moved
 * for `stillMs` (the bots answered all they will), at most `maxMs`. A server's CPU going idle is
 * no sign on a busy machine: it may just not have been given a core. Internal.
 */
async function quiet(size: () => number | Promise<number>, stillMs: number, maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  let last = await size();
  let since = performance.now();
  while (performance.now() < until && performance.now() - since < stillMs) {
    await sleep(500);
    const now = await size();
    if (now !== last) [last, since] = [now, performance.now()];
  }
}

/**
 * Sends one message, again (same Idempotency-Key: never twice) when the connection dropped —
 * a loaded machine lets the server close a kept-alive connection as a request goes out. Internal.
 */
async function send(
  agent: Agent,
  url: string,
  key: string,
  body: string,
  id: string,
): Promise<{ status: number; body: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await post(agent, url, key, body, id);
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(100 * attempt);
    }
  }
}

/** The outcomes (and reasons) of the bots' last 1,000 traces each, counted. Internal. */
async function traceSummary(dataDir: string, names: string[]): Promise<string> {
  const counts = new Map<string, number>();
  for (const name of names) {
    try {
      const { traces } = (await callAdmin(dataDir, 'bots.trace', { name, limit: 1000 })) as {
        traces: Array<{ outcome: string; reason?: string }>;
      };
      for (const t of traces)
        counts.set(
          `${t.outcome}${t.reason ? `/${t.reason}` : ''}`,
          (counts.get(`${t.outcome}${t.reason ? `/${t.reason}` : ''}`) ?? 0) + 1,
        );
    } catch (err) {
      counts.set(`unreadable (${(err as Error).message.slice(0, 60)})`, 1);
    }
  }
  return [...counts].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
}

/** Self time by area of the newest main-thread profile in `dir`, added into `t`. Internal. */
function addShares(dir: string, t: Map<string, number>): boolean {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.0.001.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs)[0];
  if (!file) return false;
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { url: string; functionName: string } }>;
    samples: number[];
    timeDeltas: number[];
  };
  const area = new Map<number, string>();
  for (const n of p.nodes) {
    const u = n.callFrame.url;
    const a = /\/dist\/(runtime|plugin-api)\/|node_modules\/(liquidjs|re2js)\//.test(u)
      ? 'runtime'
      : /\/dist\/(api|http-server|server)|node_modules\/(express|router|body-parser|raw-body)\//.test(u)
        ? 'API'
        : /\/dist\/(store|domain)\//.test(u)
          ? 'store'
          : n.callFrame.functionName === '(idle)'
            ? 'idle'
            : 'node (HTTP, GC, I/O)';
    area.set(n.id, a);
  }
  p.samples.forEach((id, i) => t.set(area.get(id)!, (t.get(area.get(id)!) ?? 0) + (p.timeDeltas[i] ?? 0)));
  return true;
}

/** GET /metrics of a server (loopback: no token), or '' when it cannot be read. Internal. */
async function metricsOf(url: string): Promise<string> {
  try {
    const res = await fetch(`${url}/metrics`);
    return res.ok ? await res.text() : '';
  } catch {
    return '';
  }
}

/** The sum of a metric's samples whose line matches `labels` (a regex of the label set). Internal. */
function metricSum(text: string, name: string, labels = /.*/): number {
  let n = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)(\{[^}]*\})? ([\d.e+-]+)$/.exec(line);
    if (m && m[1] === name && labels.test(m[2] ?? '')) n += Number(m[3]);
  }
  return n;
}

/**
 * What one answered event cost the server, from its CPU time and its /metrics over the run:
 * CPU ms, group commits (journal fsyncs), the bots' polls (`GET /messages`) and replies, and the
 * mean wait of a group commit. Internal.
 */
function costOf(cpuMs: number | undefined, text: string, answered: number): string {
  if (!answered) return 'no event answered';
  const commits = metricSum(text, 'pinbot_store_commit_duration_seconds_count');
  const commitS = metricSum(text, 'pinbot_store_commit_duration_seconds_sum');
  const polls = metricSum(text, 'pinbot_http_requests_total', /route="\/api\/v1\/messages",method="GET"/);
  const per = (n: number) => (n / answered).toFixed(2);
  return (
    `per answered event: server CPU ${cpuMs === undefined ? '?' : (cpuMs / answered).toFixed(2)} ms, ` +
    `${per(commits)} group commits (mean ${commits ? ((1000 * commitS) / commits).toFixed(1) : '?'} ms), ` +
    `${per(polls)} polls`
  );
}

/** Where the profiles' self time goes: pinbot's runtime (bots, templates), its API, its store, the rest. Internal. */
function cpuShares(profileDirs: string[]): string {
  const t = new Map<string, number>();
  if (!profileDirs.map((d) => addShares(d, t)).some(Boolean)) return 'no profile';
  t.delete('idle');
  const busy = [...t.values()].reduce((a, b) => a + b, 0);
  return [...t]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${Math.round((100 * v) / busy)}%`)
    .join(', ');
}

/**
 * V8's sampling interval (µs) of the server's profile, which only gives the CPU shares by area.
 * Every 10 ms: sampling every 1 ms (node's default) cost the server 21–28% more CPU an answered
 * event (bench/tools/bots-cpu.ts, variants bots-prof and bots-prof10 alternated), and so as much
 * of the answered events a second it measures; every 10 ms costs nothing measurable and still
 * takes ~100 samples a second of load. `BENCH_BOTS_PROF_INTERVAL` sets another (1000: as before).
 */
const PROF_INTERVAL_US = Number(process.env.BENCH_BOTS_PROF_INTERVAL ?? 10_000);

/** Where a server writes its profile (kept under BENCH_CPU_PROF), and the node flags that make it. Internal. */
function profileOf(name: string, runDir: string): { dir: string; flags: string[] } {
  const kept = process.env.BENCH_CPU_PROF;
  const dir = kept ? join(kept, name) : join(runDir, `profile-${name}`);
  mkdirSync(dir, { recursive: true });
  // spawnServer adds the profile flags itself under BENCH_CPU_PROF (node's 1 ms: a profile to read)
  const flags = ['--cpu-prof', '--cpu-prof-dir', dir, `--cpu-prof-interval=${PROF_INTERVAL_US}`];
  return { dir, flags: kept ? [] : flags };
}

/** The config of the servers: rate limits on, the bots' users with limits of their own. Internal. */
function throughputConfig(botUsers: Array<{ name: string }>, botsDir: string, extra: Record<string, unknown> = {}) {
  const own = { general: 10_000_000, messages: 10_000_000, conditional: 10_000_000 };
  return {
    log: { level: 'info' },
    bots: { dir: botsDir, enabled: true },
    rate_limits: {
      enabled: true,
      general: { limit: PERSON_LIMIT * 2, window: '1m' },
      messages: { limit: PERSON_LIMIT, window: '1m' },
      users: Object.fromEntries(botUsers.map((u) => [u.name, own])),
    },
    ...extra,
  };
}

type User = { id: string; pin: string; key: string };

/**
 * The load: every person sends to the bots in turn, PER_PERSON_PER_MIN a minute each, for SEND_S
 * s, spread over `urls` (one per server); each message with its Idempotency-Key. Internal.
 */
async function sendLoad(
  progress: (m: string) => void,
  name: string,
  urls: string[],
  people: User[],
  bots: User[],
): Promise<{ sent: number; refused: Record<number, number> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const refused: Record<number, number> = {};
  let sent = 0;
  try {
    const perS = (PEOPLE * PER_PERSON_PER_MIN) / 60;
    progress(`${name}: ${PEOPLE} people → ${BOTS} bots, ${Math.round(perS)} messages/s for ${SEND_S} s`);
    const inFlight: Promise<void>[] = [];
    const t0 = performance.now();
    const total = Math.round(perS * SEND_S);
    for (let k = 0; k < total; k++) {
      const wait = t0 + (k * 1000) / perS - performance.now();
      if (wait > 2) await sleep(wait);
      const person = people[k % PEOPLE]!;
      const bot = bots[Math.floor(k / PEOPLE) % BOTS]!;
      const body = JSON.stringify({ recipient_pin: bot.pin, content: `m${k}` });
      inFlight.push(
        send(agent, urls[k % urls.length]!, person.key, body, `bt-${k}`).then((r) => {
          if (r.status === 201) sent++;
          else refused[r.status] = (refused[r.status] ?? 0) + 1;
        }),
      );
    }
    await Promise.all(inFlight);
    progress(`${name}: ${sent} sent in ${((performance.now() - t0) / 1000).toFixed(1)} s; waiting for the bots`);
    return { sent, refused };
  } finally {
    agent.destroy();
  }
}

/**
 * bots-throughput: 1,000 people each writing to 10 echo bots run by one `pinbot serve` (file
 * store, rate limits on: the people at PERSON_LIMIT messages a minute, the bots' users with
 * limits of their own), sending together as fast as their limit allows for SEND_S s. Counted
 * from the store once the server stopped: every message and every reply with their commit
 * timestamps — answered events a second, message committed → reply committed p50/p99, and
 * nothing lost or answered twice. The server's CPU profile says where the time went.
 */
export default defineBench({
  name: 'bots-throughput',
  summary:
    `1,000 people writing to 10 echo bots (file store): ≥ ${TARGET.eventsPerS} ` +
    `answered events/s, p99 ≤ ${TARGET.p99Ms} ms, none lost or answered twice`,
  async run(ctx) {
    const tmp = await botsRunDirs('bots-throughput', BOTS, BOTS + PEOPLE, ctx.progress);
    const { ds, dataDir, botsDir } = tmp;
    const prof = profileOf('pinbot-bots-throughput', tmp.dir);
    const configFile = join(tmp.dir, 'config.yaml');
    writeFileSync(configFile, stringify(throughputConfig(ds.meta.users.slice(0, BOTS), botsDir)));
    const srv = await spawnServer({
      name: 'pinbot-bots-throughput',
      args: [...prof.flags, 'bin/pinbot.js', 'serve', '--data', dataDir, '--port', '0', '--config', configFile],
    });
    const bots = ds.meta.users.slice(0, BOTS);
    let load = { sent: 0, refused: {} as Record<number, number> };
    let traces = '';
    let cpuMs: number | undefined;
    let text = '';
    try {
      // the bots start: every one running, then the server idle (its start-up — plugins loaded,
      // schemas compiled — is not counted against the events; on a busy machine it takes longer)
      await allRunning(dataDir, BOTS, performance.now(), ctx.progress);
      await settled(srv);
      const cpu0 = srv.cpuMs();
      load = await sendLoad(ctx.progress, 'bots-throughput', [srv.url], ds.meta.users.slice(BOTS), bots);
      // longer than a poll interval (a bot whose backlog was full looks again after one, 5 s) and
      // than one poll of a bot's 1,000 conversations on a busy machine (no commit while it reads)
      await quiet(() => bytesOf(dataDir), 30_000, 300_000);
      const cpu1 = srv.cpuMs();
      cpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
      text = await metricsOf(srv.url);
      traces = await traceSummary(
        dataDir,
        bots.map((_, i) => `echo-${i}`),
      );
    } finally {
      await srv.stop(30_000);
    }
    try {
      const store = await FileStore.open(dataDir);
      try {
        const row = countRow(store.read, 'file store', new Set(bots.map((b) => b.id)), load, cpuShares([prof.dir]));
        const answered = Number(/(\d+) answered/.exec(row.note ?? '')?.[1] ?? 0);
        row.note = `${row.note}; ${costOf(cpuMs, text, answered)}; the bots' last traces: ${traces}`;
        return [row];
      } finally {
        await store.close();
      }
    } finally {
      tmp.cleanup();
    }
  },
});

/**
 * bots-throughput-pg: the same load on PostgreSQL, three `pinbot serve` on one database sharing
 * the 10 bots by lease (`bots.lease_ttl: 15s`, the default: a shorter one on a loaded machine
 * takes a stalled process for dead and moves its bots mid-load), the people's messages spread
 * over the three.
 * Reported, no target: on a 2-core machine the three processes and PostgreSQL share the cores.
 */
export const botsThroughputPg = defineBench({
  name: 'bots-throughput-pg',
  summary: '1,000 people writing to 10 echo bots on PostgreSQL, 3 processes (report)',
  async run(ctx) {
    const tmp = await botsRunDirs('bots-throughput-pg', BOTS, BOTS + PEOPLE, ctx.progress);
    const { ds, dataDir, botsDir } = tmp;
    const pg = await startPostgres({ fsync: true });
    const servers: ServerProcess[] = [];
    let observer: PgStore | undefined;
    try {
      const url = await pg.createDatabase('throughput');
      await importDataDir(dataDir, { url });
      const configFile = join(tmp.dir, 'config.yaml');
      const extra = { store: { driver: 'postgres', url } };
      const config = throughputConfig(ds.meta.users.slice(0, BOTS), botsDir, extra);
      writeFileSync(configFile, stringify({ ...config, bots: { ...config.bots, lease_ttl: '15s' } }));
      const profs = [0, 1, 2].map((i) => profileOf(`pinbot-bots-throughput-pg${i}`, tmp.dir));
      for (const [i, prof] of profs.entries()) {
        const data = join(tmp.dir, `pg${i}`);
        const args = [...prof.flags, 'bin/pinbot.js', 'serve', '--data', data, '--port', '0', '--config', configFile];
        servers.push(await spawnServer({ name: `pinbot-bots-throughput-pg${i}`, args }));
      }
      observer = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined });
      const store = observer;
      ctx.progress(`bots-throughput-pg: ${await spread(store)}`);
      const bots = ds.meta.users.slice(0, BOTS);
      const urls = servers.map((s) => s.url);
      const load = await sendLoad(ctx.progress, 'bots-throughput-pg', urls, ds.meta.users.slice(BOTS), bots);
      const count = async () => (await store.durable(), store.read.col(Messages).count());
      await quiet(count, 30_000, 300_000);
      await Promise.all(servers.splice(0).map((s) => s.stop(30_000)));
      await store.durable();
      const shares = cpuShares(profs.map((p) => p.dir));
      return [countRow(store.read, 'PostgreSQL, 3 processes', new Set(bots.map((b) => b.id)), load, shares, false)];
    } finally {
      await Promise.all(servers.map((s) => s.stop(30_000)));
      await observer?.close();
      await pg.stop();
      tmp.cleanup();
    }
  },
});

/**
 * Waits (at most 60 s) until every bot has a lease and all three processes run some; says how
 * they are spread. Internal. */
async function spread(store: PgStore): Promise<string> {
  let per: number[] = [];
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(250)) {
    await store.durable();
    const owners = new Map<string, number>();
    for (const l of store.read.col(BotLeases).all()) owners.set(l.owner, (owners.get(l.owner) ?? 0) + 1);
    per = [...owners.values()].sort((a, b) => b - a);
    if (per.reduce((a, b) => a + b, 0) === BOTS && per.length === 3 && per[0]! - per[2]! <= 1) break;
  }
  return `bots per process: ${per.join(', ')}`;
}

/** Reads every message and reply from the store (its servers stopped) and makes the row. Internal. */
function countRow(
  read: ReadView,
  where: string,
  botIds: Set<string>,
  { sent, refused }: { sent: number; refused: Record<number, number> },
  shares: string,
  targeted = true,
): Figure {
  const asked = new Map<string, { at: number; conversation: string }>();
  const replies = new Map<string, number[]>();
  for (const m of read.col(Messages).all()) {
    if (botIds.has(m.sender_id)) {
      const k = /^echo (m\d+)$/.exec(m.content)?.[1];
      if (k)
        replies.set(`${m.conversation_id} ${k}`, [...(replies.get(`${m.conversation_id} ${k}`) ?? []), m.timestamp]);
    } else if (/^m\d+$/.test(m.content))
      asked.set(`${m.conversation_id} ${m.content}`, { at: m.timestamp, conversation: m.conversation_id });
  }
  const latencies: number[] = [];
  let lost = 0;
  let twice = 0;
  let first = Infinity;
  let last = 0;
  for (const [k, q] of asked) {
    const r = replies.get(k);
    if (!r) {
      lost++;
      continue;
    }
    if (r.length > 1) twice++;
    latencies.push(r[0]! - q.at);
    first = Math.min(first, q.at);
    last = Math.max(last, r[0]!);
  }
  const eventsPerS = latencies.length / Math.max(0.001, (last - first) / 1000);
  const p50 = latencies.length ? pct(latencies, 50) : undefined;
  const p99 = latencies.length ? pct(latencies, 99) : undefined;
  const refusals = Object.entries(refused)
    .map(([s, n]) => `${n}× ${s}`)
    .join(', ');
  return {
    bench: targeted ? 'bots-throughput' : 'bots-throughput-pg',
    name: `bots-throughput: ${PEOPLE.toLocaleString('en-US')} people → ${BOTS} echo bots, ${where}`,
    rps: eventsPerS,
    p50,
    p99,
    value: `${Math.round(eventsPerS)} answered events/s`,
    target: targeted
      ? `≥ ${TARGET.eventsPerS.toLocaleString('en-US')} events/s, p99 ≤ ${TARGET.p99Ms} ms, none lost or twice`
      : 'report; none lost or twice',
    pass:
      asked.size === sent &&
      sent > 0 &&
      lost === 0 &&
      twice === 0 &&
      (!targeted || (eventsPerS >= TARGET.eventsPerS && p99 !== undefined && p99 <= TARGET.p99Ms)),
    note:
      `${sent} messages committed, ${latencies.length} answered, ${lost} never ` +
      `answered, ${twice} answered twice${refusals ? `, refused: ${refusals}` : ''}; ` +
      `server CPU: ${shares}`,
  };
}
