import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { callAdmin } from '../src/admin/socket.js';
import type { UsersMeta } from './data/users.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import type { Figure } from './harness/figure.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { REPO, runDir } from './harness/paths.js';
import type { ServerProcess } from './harness/server-process.js';

const BOTS = 1000;
const SENDERS = 100;
const POLL_S = 5;
const SAMPLES = 100;
const IDLE_S = 15;

/** An echo bot acting as an existing user, polling every POLL_S seconds. */
const botFile = (i: number) =>
  [`name: echo-${i}`, `as: bench-${i}`, `poll: ${POLL_S}s`, 'rules:', '  - id: echo', '    on: message.received', '    do:', '      - reply: "echo {{ event.content }}"', ''].join('\n');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface BotStatus {
  name?: string;
  status: string;
  last_poll?: string;
  message?: string;
}

/** Waits until every bot runs and has polled once; returns the statuses. Internal. */
async function allPolling(dataDir: string, progress: (m: string) => void, timeoutMs = 300_000): Promise<BotStatus[]> {
  const until = performance.now() + timeoutMs;
  let last: BotStatus[] = [];
  for (;;) {
    last = ((await callAdmin(dataDir, 'bots.status')) as { bots: BotStatus[] }).bots;
    const ready = last.filter((b) => b.status === 'running' && b.last_poll).length;
    if (ready === BOTS) return last;
    if (performance.now() > until) {
      const other = last.find((b) => b.status !== 'running');
      throw new Error(`only ${ready} of ${BOTS} bots running and polled after ${timeoutMs / 1000} s${other ? ` (e.g. ${other.name}: ${other.status} ${other.message ?? ''})` : ''}`);
    }
    progress(`  bots: ${ready}/${BOTS} running and polled`);
    await sleep(2000);
  }
}

/** Server CPU over `seconds`, in percent of one core. Internal. */
async function cpuPercent(srv: ServerProcess, seconds: number): Promise<number | undefined> {
  const c0 = srv.cpuMs();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const c1 = srv.cpuMs();
  return c0 === undefined || c1 === undefined ? undefined : (100 * (c1 - c0)) / (performance.now() - t0);
}

/**
 * bots: 1,000 echo bots (one YAML file each, `poll: 5s`) run by `pinbot serve` on its embedded
 * server. Idle CPU: the server process over IDLE_S (15) s with no events. Event→action: SAMPLES messages
 * sent to random bots at random moments; the latency is the reply's timestamp minus the
 * message's (both server timestamps), so it includes the wait for the bot's next poll.
 */
export default defineBench({
  name: 'bots',
  summary: '1,000 bots, 5 s poll: event→action p50/p99, idle CPU (p50 ≤ 5 s, idle ≤ 10% of a core)',
  async run(ctx) {
    const target = `p50 ≤ ${POLL_S} s, idle CPU ≤ 10%`;
    if (!existsSync(join(REPO, 'src/runtime'))) {
      return [{ bench: 'bots', name: `bots ${BOTS.toLocaleString('en-US')}, ${POLL_S} s poll`, target, note: 'not measured: the bot runtime (src/runtime, branch bots) is not in this build' }];
    }
    const ds = await dataset<UsersMeta>('users', { users: BOTS + SENDERS }, ctx.progress);
    const tmp = runDir('bots');
    const dataDir = join(tmp.dir, 'data');
    const botsDir = join(tmp.dir, 'bots');
    copyStore(ds, dataDir);
    mkdirSync(botsDir);
    for (let i = 0; i < BOTS; i++) writeFileSync(join(botsDir, `echo-${i}.yaml`), botFile(i));
    const t0 = performance.now();
    // Started without --no-bots: this is the row that runs them.
    const srv = await startPinbot({ runDir: tmp.dir, dataDir, config: { bots: { dir: botsDir, enabled: true } }, bots: true });
    try {
      await allPolling(dataDir, ctx.progress);
      const startS = (performance.now() - t0) / 1000;
      ctx.progress(`bots: ${BOTS} running after ${startS.toFixed(1)} s; measuring idle CPU over ${IDLE_S} s`);
      await sleep(2 * POLL_S * 1000); // past the start-up burst: every bot on its own steady schedule
      const idle = await cpuPercent(srv, IDLE_S);

      ctx.progress(`bots: ${SAMPLES} messages to random bots over ${2 * POLL_S} s`);
      const senders = ds.meta.users.slice(BOTS);
      const sent: Array<{ bot: number; sender: string; conversation: string; timestamp: number; content: string }> = [];
      await Promise.all(
        Array.from({ length: SAMPLES }, async (_, k) => {
          await sleep(Math.random() * 2 * POLL_S * 1000);
          const bot = Math.floor(Math.random() * BOTS);
          const sender = senders[k % senders.length]!;
          const content = `ping ${k}`;
          const r = await probe(srv.url, 'POST', '/api/v1/messages/send', { 'X-API-Key': sender.key }, JSON.stringify({ recipient_pin: ds.meta.users[bot]!.pin, content }));
          if (r.status !== 201) throw new Error(`POST /messages/send answered ${r.status} ${JSON.stringify(r.body)}`);
          sent.push({ bot, sender: sender.key, conversation: r.body.conversation_id, timestamp: r.body.timestamp, content });
        }),
      );
      await sleep(2 * POLL_S * 1000 + 2000); // every bot has polled at least once since the last message
      const latencies: number[] = [];
      for (const s of sent) {
        const page = await probe(srv.url, 'GET', `/api/v1/conversations/${s.conversation}/messages?since=${s.timestamp - 1}&limit=200`, { 'X-API-Key': s.sender });
        const reply = (page.body.messages as Array<{ content: string; timestamp: number }>).find((m) => m.content === `echo ${s.content}`);
        if (reply) latencies.push(reply.timestamp - s.timestamp);
      }
      const lost = sent.length - latencies.length;
      const fig: Figure = {
        bench: 'bots',
        name: `bots ${BOTS.toLocaleString('en-US')}, ${POLL_S} s poll: event→action`,
        p50: latencies.length ? pct(latencies, 50) : undefined,
        p99: latencies.length ? pct(latencies, 99) : undefined,
        target,
        value: `idle CPU ${idle === undefined ? 'unknown' : idle.toFixed(1) + '% of a core'}`,
        note: `${latencies.length}/${sent.length} replies${lost ? ` (${lost} missing)` : ''}; all ${BOTS} bots running ${startS.toFixed(0)} s after spawn`,
        pass: latencies.length > 0 && lost === 0 && pct(latencies, 50) <= POLL_S * 1000 && idle !== undefined && idle <= 10,
      };
      return [fig];
    } finally {
      await srv.stop();
      tmp.cleanup();
    }
  },
});
