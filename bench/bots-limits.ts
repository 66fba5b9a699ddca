import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../src/clock/clock.js';
import { createScheduler } from '../src/clock/scheduler.js';
import { createRegistry } from '../src/runtime/registry.js';
import { BotHost } from '../src/runtime/host/bot-host.js';
import { fileBotStorage } from '../src/deployment/bot-storage.js';
import type { BenchUser, UsersMeta } from './data/users.js';
import { defineBench } from './harness/bench.js';
import { echoBot, FIVE_TRIGGERS, pct, sleep } from './harness/bots-kit.js';
import { copyStore, dataset } from './harness/dataset.js';
import type { Figure } from './harness/figure.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';

const SAMPLES = 10;
const SPREAD_S = 40; // 15 events a minute: within what the spec limits let one bot answer (about 4 requests each)
const IDLE_S = 15;

/** Events of the "5 trigger types" rows: messages and tips, at random moments. Internal. */
async function mixedEvents(
  url: string,
  bot: BenchUser,
  senders: BenchUser[],
): Promise<{ latencies: number[]; lost: number; missing: string[] }> {
  const sent: Array<{ key: string; at: number; conversation?: string; expect: string }> = [];
  await Promise.all(
    Array.from({ length: SAMPLES }, async (_, k) => {
      await sleep(Math.random() * SPREAD_S * 1000);
      const s = senders[k % senders.length]!;
      const h = { 'X-API-Key': s.key };
      if (k % 2 === 0) {
        const r = await probe(
          url,
          'POST',
          '/api/v1/messages/send',
          h,
          JSON.stringify({ recipient_pin: bot.pin, content: `ping ${k}` }),
        );
        if (r.status !== 201) throw new Error(`message: ${r.status} ${JSON.stringify(r.body)}`);
        sent.push({ key: s.key, at: r.body.timestamp, conversation: r.body.conversation_id, expect: `echo ping ${k}` });
      } else {
        const r = await probe(
          url,
          'POST',
          '/api/v1/wallet/send',
          h,
          JSON.stringify({ recipient_pin: bot.pin, amount: 0.01, note: `tip ${k}` }),
        );
        if (r.status !== 201) throw new Error(`tip: ${r.status} ${JSON.stringify(r.body)}`);
        sent.push({ key: s.key, at: Date.parse(r.body.transaction.created_at), expect: 'thanks for 0.01' });
      }
    }),
  );
  await sleep(5000);
  const latencies: number[] = [];
  const missing: string[] = [];
  for (const s of sent) {
    let conv = s.conversation;
    if (!conv) {
      const list = await probe(url, 'GET', '/api/v1/conversations', { 'X-API-Key': s.key });
      conv = (list.body.conversations as Array<{ id: string; participants: Array<{ pin_code: string }> }>).find((c) =>
        c.participants.some((p) => p.pin_code === bot.pin),
      )?.id;
    }
    if (!conv) {
      missing.push(`${s.expect} (no conversation)`);
      continue;
    }
    const page = await probe(url, 'GET', `/api/v1/conversations/${conv}/messages?since=${s.at - 1}&limit=200`, {
      'X-API-Key': s.key,
    });
    const reply = (page.body.messages as Array<{ content: string; timestamp: number }>).find(
      (m) => m.content === s.expect && m.timestamp >= s.at,
    );
    if (reply) latencies.push(reply.timestamp - s.at);
    else missing.push(s.expect);
  }
  return { latencies, lost: sent.length - latencies.length, missing };
}

/** A fetch that counts answers by status and the bytes of their bodies. Internal. */
function countingFetch() {
  const counts = { byStatus: new Map<number, number>(), bytes: 0, changed: new Map<string, number>() };
  const f: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.text();
    counts.byStatus.set(res.status, (counts.byStatus.get(res.status) ?? 0) + 1);
    counts.bytes += Buffer.byteLength(text);
    if (res.status === 200) {
      const path = new URL(String(input)).pathname.replace(/^\/api\/v1/, '').replace(/\/cnv_\w+/, '/:id');
      counts.changed.set(path, (counts.changed.get(path) ?? 0) + 1);
    }
    return new Response(res.status === 304 ? null : text, { status: res.status, headers: res.headers });
  };
  return { f, counts };
}

/**
 * bots-limits: a bot with 5 trigger types under the spec rate limits (100 requests a minute,
 * 30 messages): on the embedded server (event→action, against the same bot with limits off,
 * in the same run), and as a remote bot (`poll: 1s`, the BotHost of `pinbot bots run` in the
 * bench process, talking HTTP to the server process) — event→action, then what its polls cost
 * while nothing changes (304s, body bytes) against a full read of the same lists.
 */
export default defineBench({
  name: 'bots-limits',
  summary:
    'a bot with 5 trigger types under spec rate limits: embedded p50 ≤ 25 ms; remote ' +
    'poll 1s p50 ≤ 1 s; idle remote polls are 304s',
  async run(ctx) {
    const ds = await dataset<UsersMeta>('users', { users: 40 }, ctx.progress);
    const tmp = runDir('bots-limits');
    try {
      return [await embeddedFigure(ctx, ds, tmp.dir), ...(await remoteFigures(ctx, ds, tmp.dir))];
    } finally {
      tmp.cleanup();
    }
  },
});

type Dataset = Awaited<ReturnType<typeof dataset<UsersMeta>>>;
type Progress = { progress: (m: string) => void };

/** 1. Embedded, spec limits on against (baseline) the same bot with limits off. Internal. */
async function embeddedFigure(ctx: Progress, ds: Dataset, dir: string): Promise<Figure> {
  const [embeddedBot, , offBot, ...senders] = ds.meta.users;
  const latency: Record<string, Awaited<ReturnType<typeof mixedEvents>>> = {};
  for (const [label, limits, bot] of [
    ['on', true, embeddedBot!],
    ['off', false, offBot!],
  ] as const) {
    const dataDir = join(dir, `data-${label}`);
    const botsDir = join(dir, `bots-${label}`);
    copyStore(ds, dataDir);
    mkdirSync(botsDir);
    writeFileSync(join(botsDir, 'five.yaml'), echoBot(0, { as: bot.name, rules: FIVE_TRIGGERS }));
    const srv = await startPinbot({
      name: `limits-${label}`,
      runDir: dir,
      dataDir,
      config: { rate_limits: { enabled: limits }, bots: { dir: botsDir, enabled: true } },
      bots: true,
    });
    try {
      for (const s of senders) await probe(srv.url, 'GET', '/api/v1/me', { 'X-API-Key': s.key });
      await callGrant(srv.url, dataDir, senders);
      await sleep(3000);
      ctx.progress(`bots-limits: embedded, rate limits ${label}: ${SAMPLES} messages and tips over ${SPREAD_S} s`);
      latency[label] = await mixedEvents(srv.url, bot, senders);
    } finally {
      await srv.stop();
    }
  }
  const on = latency.on!;
  const off = latency.off!;
  const p50 = on.latencies.length ? pct(on.latencies, 50) : undefined;
  const p50off = off.latencies.length ? pct(off.latencies, 50) : undefined;
  const missing = on.missing.length ? ` (missing: ${on.missing.join(', ')})` : '';
  return {
    bench: 'bots-limits',
    name: 'embedded event→action, 5 trigger types, spec rate limits on',
    p50,
    p99: on.latencies.length ? pct(on.latencies, 99) : undefined,
    ratio: p50 !== undefined && p50off ? p50 / p50off : undefined,
    baseline: 'the same bot, rate limits off',
    target: 'p50 ≤ 25 ms',
    pass: p50 !== undefined && on.lost === 0 && p50 <= 25,
    note:
      `${on.latencies.length}/${SAMPLES} answered (messages and tips)${missing}; ` +
      `limits off: p50 ${p50off ?? '?'} ms, ${off.latencies.length}/${SAMPLES}`,
  };
}

/** 2. A remote bot (poll 1s, spec limits): event→action; 3. the same bot while nothing changes. Internal. */
async function remoteFigures(ctx: Progress, ds: Dataset, dir: string): Promise<Figure[]> {
  const [, remoteBot, , ...senders] = ds.meta.users;
  const dataDir = join(dir, 'data-remote');
  copyStore(ds, dataDir);
  const srv = await startPinbot({ name: 'remote', runDir: dir, dataDir, config: { rate_limits: { enabled: true } } });
  const file = join(dir, 'remote.yaml');
  writeFileSync(file, echoBot(0, { key: remoteBot!.key, poll: '1s', rules: FIVE_TRIGGERS }));
  const { f, counts } = countingFetch();
  const host = new BotHost({
    registry: createRegistry(),
    log: pino({ level: 'silent' }),
    clock: systemClock,
    scheduler: createScheduler(systemClock),
    storage: fileBotStorage({ stateDir: join(dir, 'client', 'bots') }),
    files: [file],
    server: srv.url,
    client: { fetch: f },
  });
  try {
    await callGrant(srv.url, dataDir, senders);
    await host.start();
    await host.runner('echo-0')!.started;
    await sleep(5000);
    ctx.progress(`bots-limits: remote bot, poll 1s: ${SAMPLES} messages and tips over ${SPREAD_S} s`);
    const remote = await mixedEvents(srv.url, remoteBot!, senders);
    const rp50 = remote.latencies.length ? pct(remote.latencies, 50) : undefined;
    const answered: Figure = {
      bench: 'bots-limits',
      name: 'remote bot, poll: 1s, 5 trigger types, rate limits on: event→action',
      p50: rp50,
      p99: remote.latencies.length ? pct(remote.latencies, 99) : undefined,
      ratio: rp50 === undefined ? undefined : rp50 / 1000,
      baseline: 'the poll interval (1 s)',
      target: 'p50 ≤ 1 s',
      pass: rp50 !== undefined && remote.lost === 0 && rp50 <= 1000,
      note:
        `${remote.latencies.length}/${SAMPLES} ` +
        `answered${remote.missing.length ? ` (missing: ${remote.missing.join(', ')})` : ''}`,
    };
    return [answered, await idleFigure(srv.url, remoteBot!.key, counts)];
  } finally {
    await host.stop();
    await srv.stop();
  }
}

/** 3. What the remote bot's polls cost while nothing changes: 304s without bodies. Internal. */
async function idleFigure(
  url: string,
  key: string,
  counts: ReturnType<typeof countingFetch>['counts'],
): Promise<Figure> {
  await sleep(3000);
  counts.byStatus.clear();
  counts.changed.clear();
  counts.bytes = 0;
  await sleep(IDLE_S * 1000);
  const total = [...counts.byStatus.values()].reduce((a, b) => a + b, 0);
  const notModified = counts.byStatus.get(304) ?? 0;
  const full = await fullListBytes(url, key);
  const changed = counts.changed.size ? `; 200s: ${JSON.stringify(Object.fromEntries(counts.changed))}` : '';
  return {
    bench: 'bots-limits',
    name: 'remote idle poll when nothing changed',
    value: `${total} requests in ${IDLE_S} s: ${notModified} × 304, body bytes ${counts.bytes}`,
    ratio: total ? counts.bytes / total / full : undefined,
    baseline: `a full read of the same lists (${full} bytes)`,
    target: '304s without bodies',
    pass: total > 0 && notModified === total && counts.bytes === 0,
    note: `statuses ${JSON.stringify(Object.fromEntries(counts.byStatus))}${changed}`,
  };
}

/** Gives each sender money for tips (an operator grant through the admin socket). Internal. */
async function callGrant(_url: string, dataDir: string, senders: BenchUser[]): Promise<void> {
  const { callAdmin } = await import('../src/admin/socket.js');
  for (const s of senders) await callAdmin(dataDir, 'users.grant', { pin: s.pin, amount: '5' });
}

/** Bytes of one full read of what the 5-trigger bot polls (no If-None-Match). Internal. */
async function fullListBytes(url: string, key: string): Promise<number> {
  let bytes = 0;
  for (const path of [
    '/conversations',
    '/wallet/pending',
    '/contacts/requests/pending',
    '/introductions/pending',
    '/wallet/balance',
  ]) {
    const res = await fetch(`${url}/api/v1${path}`, { headers: { 'X-API-Key': key } });
    bytes += Buffer.byteLength(await res.text());
  }
  return bytes;
}
