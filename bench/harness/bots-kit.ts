import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { callAdmin } from '../../src/admin/socket.js';
import type { UsersMeta } from '../data/users.js';
import { copyStore, dataset } from './dataset.js';
import { runDir } from './paths.js';
import { probe } from './pinbot-server.js';
import type { ServerProcess } from './server-process.js';

/** Helpers shared by the bot benches. Internal to bench/. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The five trigger types of the "5 trigger types" rows, and what each does. */
export const FIVE_TRIGGERS = `  - id: echo
    on: message.received
    do: [{ reply: "echo {{ event.content }}" }]
  - id: tip
    on: transfer.received
    do: [accept, { reply: "thanks for {{ event.amount }}" }]
  - id: friend
    on: contact_request.received
    do: [accept]
  - id: intro
    on: introduction.received
    do: [accept]
  - id: balance
    on: balance.changed
    do: [{ log: "balance {{ event.balance }}" }]
`;

/** An echo bot acting as an existing user (`as:`), or with a key (`key:` for a remote bot). */
export function echoBot(i: number, o: { as?: string; key?: string; poll?: string; rules?: string } = {}): string {
  const who = o.key ? `key: ${o.key}` : `as: ${o.as ?? `bench-${i}`}`;
  const rules =
    o.rules ?? '  - id: echo\n    on: message.received\n    do:\n      - reply: "echo {{ event.content }}"\n';
  return [`name: echo-${i}`, who, ...(o.poll ? [`poll: ${o.poll}`] : []), 'rules:', rules].join('\n');
}

export interface BotStatusLine {
  name?: string;
  status: string;
  last_poll?: string;
  message?: string;
}

/** Waits until `count` bots run (status `running`); returns the seconds it took from `t0`. */
export async function allRunning(
  dataDir: string,
  count: number,
  t0: number,
  progress: (m: string) => void,
  timeoutMs = 300_000,
): Promise<number> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const bots = ((await callAdmin(dataDir, 'bots.status')) as { bots: BotStatusLine[] }).bots;
    const running = bots.filter((b) => b.status === 'running').length;
    if (running === count) return (performance.now() - t0) / 1000;
    if (performance.now() > until) {
      const other = bots.find((b) => b.status !== 'running');
      throw new Error(
        `only ${running} of ${count} bots running after ${timeoutMs / 1000} ` +
          `s${other ? ` (e.g. ${other.name}: ${other.status} ${other.message ?? ''})` : ''}`,
      );
    }
    progress(`  bots: ${running}/${count} running`);
    await sleep(1000);
  }
}

/** A server's CPU over `seconds`, in percent of one core. */
export async function cpuPercent(srv: ServerProcess, seconds: number): Promise<number | undefined> {
  const c0 = srv.cpuMs();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const c1 = srv.cpuMs();
  return c0 === undefined || c1 === undefined ? undefined : (100 * (c1 - c0)) / (performance.now() - t0);
}

/** Two servers' CPU over the same `seconds` (a run with bots and its baseline). */
export async function cpuPercentBoth(
  a: ServerProcess,
  b: ServerProcess,
  seconds: number,
): Promise<[number | undefined, number | undefined]> {
  const a0 = a.cpuMs();
  const b0 = b.cpuMs();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const wall = performance.now() - t0;
  const a1 = a.cpuMs();
  const b1 = b.cpuMs();
  return [
    a0 === undefined || a1 === undefined ? undefined : (100 * (a1 - a0)) / wall,
    b0 === undefined || b1 === undefined ? undefined : (100 * (b1 - b0)) / wall,
  ];
}

export interface Sent {
  sender: string;
  conversation: string;
  timestamp: number;
  content: string;
}

/**
 * Sends `samples` messages to bots at random moments over `spreadMs` and returns, for each, the
 * time from the message to the bot's echo — both server timestamps, so no clock agreement
 * between processes is needed. `pick(k)` gives the sender's key and the bot's PIN.
 */
export async function echoLatencies(
  url: string,
  samples: number,
  spreadMs: number,
  pick: (k: number) => { key: string; pin: string },
  waitMs: number,
): Promise<{ latencies: number[]; lost: number }> {
  const sent: Sent[] = [];
  await Promise.all(
    Array.from({ length: samples }, async (_, k) => {
      await sleep(Math.random() * spreadMs);
      const { key, pin } = pick(k);
      const content = `ping ${k}`;
      const r = await probe(
        url,
        'POST',
        '/api/v1/messages/send',
        { 'X-API-Key': key },
        JSON.stringify({ recipient_pin: pin, content }),
      );
      if (r.status !== 201) throw new Error(`POST /messages/send answered ${r.status} ${JSON.stringify(r.body)}`);
      sent.push({ sender: key, conversation: r.body.conversation_id, timestamp: r.body.timestamp, content });
    }),
  );
  await sleep(waitMs);
  const latencies: number[] = [];
  for (const s of sent) {
    const page = await probe(
      url,
      'GET',
      `/api/v1/conversations/${s.conversation}/messages?since=${s.timestamp - 1}&limit=200`,
      { 'X-API-Key': s.sender },
    );
    const reply = (page.body.messages as Array<{ content: string; timestamp: number }>).find(
      (m) => m.content === `echo ${s.content}`,
    );
    if (reply) latencies.push(reply.timestamp - s.timestamp);
  }
  return { latencies, lost: sent.length - latencies.length };
}

/**
 * The folders of a bot bench run: a copy of the users data set for the server with bots and one
 * for the baseline server without, and a bots folder with `bots` echo bots. Internal.
 */
export async function botsRunDirs(name: string, bots: number, users: number, progress: (m: string) => void) {
  const ds = await dataset<UsersMeta>('users', { users }, progress);
  const tmp = runDir(name);
  const dataDir = join(tmp.dir, 'data');
  const baseDir = join(tmp.dir, 'base');
  const botsDir = join(tmp.dir, 'bots');
  copyStore(ds, dataDir);
  copyStore(ds, baseDir);
  mkdirSync(botsDir);
  for (let i = 0; i < bots; i++) writeFileSync(join(botsDir, `echo-${i}.yaml`), echoBot(i));
  return { ...tmp, ds, dataDir, baseDir, botsDir };
}
