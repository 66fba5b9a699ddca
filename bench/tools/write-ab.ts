import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { MessagesMeta } from '../data/messages.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { runLoad, stopLoad, loadProblem, type LoadRequest } from '../harness/load.js';
import { MESSAGE_BODY, postMessages, SMALL_STORE } from '../harness/messages-load.js';
import { runDir } from '../harness/paths.js';
import { probe, startPinbot } from '../harness/pinbot-server.js';
import { settle } from '../harness/rounds.js';
import { spawnServer, type ServerProcess } from '../harness/server-process.js';
import { UNIQUE_ID } from '../harness/load-spec.js';
import { syscallsUnder } from '../harness/strace.js';

const { values: args } = parseArgs({
  options: {
    other: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    plain: { type: 'boolean', default: false },
    strace: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const TICK_US = 1e6 / 100; // USER_HZ

/** CPU time in µs of each thread of `pid`, user and system apart, by thread name. Internal. */
function threads(pid: number): Map<string, { user: number; sys: number; faults: number }> {
  const out = new Map<string, { user: number; sys: number; faults: number }>();
  // Node 20's threads are all named `node`: the main thread, then (made at start, before any
  // JavaScript) V8's platform workers and node's own (4 + 2), then libuv's pool, made on its first use
  const tids = readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .sort((a, b) => a - b);
  for (const [i, t] of tids.entries()) {
    const tid = String(t);
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // gone
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const group = i === 0 ? 'main' : i <= 6 ? 'V8 platform' : 'libuv pool';
    const g = out.get(group) ?? { user: 0, sys: 0, faults: 0 };
    g.user += Number(f[11]) * TICK_US;
    g.sys += Number(f[12]) * TICK_US;
    g.faults += Number(f[7]); // minor page faults (system time the heap's growth costs)
    out.set(group, g);
  }
  return out;
}

/** Syscalls per write of a server under `seconds` of load, by name (strace -f -c on every thread). Internal. */
async function syscalls(pid: number, url: string, requests: LoadRequest[], out: string, seconds: number) {
  const load = () => runLoad({ url, connections: 50, durationS: seconds, requests });
  return syscallsUnder(pid, out, load, { per: 'a write', of: 'writes' }, 10);
}

const AS_SERVE = {
  rate_limits: {
    enabled: true,
    general: { limit: 1_000_000_000, window: '1m' },
    messages: { limit: 1_000_000_000, window: '1m' },
  },
};

const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, (m) => console.log(m));
const tmp = runDir('write-ab');
const meta = join(ds.dir, 'meta.json');
const servers: Array<{ name: string; srv: ServerProcess; requests: LoadRequest[] }> = [];
const plainRequests = postMessages(ds.meta, 50);
const keyed = plainRequests.map((r) => ({ ...r, headers: { ...r.headers, 'Idempotency-Key': `ab-${UNIQUE_ID}` } }));
const pinbotRequests = args.plain ? plainRequests : keyed;
try {
  const checkouts: Array<[string, string | undefined]> = [['this', undefined]];
  if (args.other) checkouts.push(['other', resolve(args.other)]);
  for (const [name, dir] of checkouts) {
    copyStore(ds, join(tmp.dir, name));
    const srv = await startPinbot({
      name: `pinbot-${name}`,
      runDir: tmp.dir,
      dataDir: join(tmp.dir, name),
      config: args.plain ? {} : AS_SERVE,
      bin: dir ? join(dir, 'bin/pinbot.js') : undefined,
    });
    servers.push({ name, srv, requests: pinbotRequests });
  }
  const fastify = await spawnServer({
    name: 'fastify-write',
    args: ['bin/run-ts.js', 'bench/baselines/fastify-write.ts', meta, join(tmp.dir, 'fastify.log')],
  });
  servers.push({ name: 'fastify', srv: fastify, requests: plainRequests });
  for (const s of servers) {
    const r = s.requests[0]!;
    const headers = { ...r.headers, 'Idempotency-Key': `probe-${s.name}` };
    const p = await probe(s.srv.url, 'POST', r.path, headers, MESSAGE_BODY);
    if (p.status !== 201) throw new Error(`${s.name}: ${p.status} ${JSON.stringify(p.body)}`);
    await runLoad({ url: s.srv.url, connections: 50, durationS: 1, requests: s.requests }); // warm-up
  }
  const rows = new Map<string, Array<Record<string, number>>>();
  let skipped = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const line: string[] = [];
    let invalid = false;
    for (const s of servers) {
      await settle(s.srv);
      const before = threads(s.srv.pid);
      const r = await runLoad({ url: s.srv.url, connections: 50, durationS: DURATION, requests: s.requests });
      const after = threads(s.srv.pid);
      const problem = loadProblem(r);
      // a round the machine starved (no answer within autocannon's timeout) is left out, said so
      if (problem) {
        line.push(`${s.name} INVALID (${problem})`);
        invalid = true;
        continue;
      }
      const row: Record<string, number> = { rps: r.rps, total: 0 };
      for (const [g, a] of after) {
        const b = before.get(g) ?? { user: 0, sys: 0, faults: 0 };
        row[`${g} user`] = (a.user - b.user) / r.total;
        row[`${g} sys`] = (a.sys - b.sys) / r.total;
        row['page faults'] = (row['page faults'] ?? 0) + (a.faults - b.faults) / r.total;
        row.total! += (a.user - b.user + a.sys - b.sys) / r.total;
      }
      rows.set(s.name, [...(rows.get(s.name) ?? []), row]);
      line.push(`${s.name} ${Math.round(r.rps)} req/s ${row.total!.toFixed(0)} µs`);
    }
    if (invalid) {
      // keep the rows of a round in step: drop what this round added
      for (const s of servers) if ((rows.get(s.name)?.length ?? 0) === round - skipped) rows.get(s.name)!.pop();
      skipped++;
      console.log(`round ${round}: ${line.join(', ')} — left out`);
      continue;
    }
    const f = rows.get('fastify')!.at(-1)!;
    const ratios = servers
      .filter((s) => s.name !== 'fastify')
      .map((s) => {
        const p = rows.get(s.name)!.at(-1)!;
        return `${s.name}: ${(p.rps! / f.rps!).toFixed(2)}× req/s, ${(p.total! / f.total!).toFixed(2)}× CPU`;
      });
    console.log(`round ${round}: ${line.join(', ')}; ${ratios.join('; ')}`);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  console.log(
    `\nmedians over ${ROUNDS} rounds (CPU µs per write; ${args.plain ? 'no key, limits off' : 'as serve, keyed'}):`,
  );
  for (const [name, rs] of rows) {
    const keys = [...new Set(rs.flatMap((r) => Object.keys(r)))].filter((k) => k !== 'rps').sort();
    console.log(
      `  ${name.padEnd(8)} ${Math.round(med(rs.map((r) => r.rps!)))} req/s  ` +
        keys.map((k) => `${k} ${med(rs.map((r) => r[k] ?? 0)).toFixed(1)}`).join(', '),
    );
  }
  const f = rows.get('fastify')!;
  for (const s of servers.filter((x) => x.name !== 'fastify')) {
    const p = rows.get(s.name)!;
    const r = p.map((x, i) => x.rps! / f[i]!.rps!);
    const c = p.map((x, i) => x.total! / f[i]!.total!);
    console.log(
      `  ${s.name} ÷ fastify: req/s ${med(r).toFixed(2)}× (rounds ${r.map((x) => x.toFixed(2)).join(' ')}), ` +
        `CPU ${med(c).toFixed(2)}×`,
    );
  }
  if (args.strace)
    for (const s of servers)
      console.log(
        `  strace ${s.name}: ${await syscalls(s.srv.pid, s.srv.url, s.requests, join(tmp.dir, `strace-${s.name}.txt`), 2)}`,
      );
} finally {
  await Promise.all(servers.map((s) => s.srv.stop()));
  stopLoad();
  tmp.cleanup();
}
