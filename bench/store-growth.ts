/**
 * How much one user can make the store grow in a day under the default rate limits
 * (docs/reliability.md, "Store growth"): `node bin/run-ts.js bench/store-growth.ts`.
 *
 * Measures the journal bytes of each kind of write at its largest (longest content, note and
 * Idempotency-Key; the most participants; characters that JSON escapes to 6 bytes), then fills
 * a day: each bucket's writes at its limit, the rest of the general bucket with the largest
 * write that only general counts.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/api/app.js';
import { configFrom } from '../src/config/load.js';
import { parseDuration } from '../src/util/duration.js';
import { VirtualClock } from '../src/clock/virtual-clock.js';
import { createKey } from '../src/domain/users/keys.js';
import { createUser } from '../src/domain/users/users.js';
import { grantMoney } from '../src/domain/wallet/grants.js';
import { FileStore } from '../src/store/file/file-store.js';
import { observeCommits } from '../src/store/core/commit-signal.js';

const defaults = configFrom({});
const dir = mkdtempSync(join(tmpdir(), 'pinbot-growth-'));
const { store, commits } = observeCommits(await FileStore.open(dir));
const env = {
  clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')),
  config: configFrom({ rate_limits: { enabled: false } }),
};
const { app } = createApp({ store, commits, env, log: pino({ level: 'silent' }) });
const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;

const people = await store.transaction((tx) =>
  Array.from({ length: 101 }, (_, i) => {
    const u = createUser(tx, env, { name: `User ${i} ${'x'.repeat(80)}` });
    grantMoney(tx, env, u.id, 100_000_00);
    return { id: u.id, pin: u.pin_code, key: createKey(tx, env, u.id).api_key };
  }),
);
const [me, ...others] = people;
const journal = () => statSync(join(dir, 'journal.jsonl')).size;
let n = 0;
const post = async (path: string, body: unknown, key = me!.key) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': `${++n}`.padStart(255, 'k') },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, any>;
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
/** Journal bytes of `f`, the largest of `times` tries. */
const bytesOf = async (times: number, f: (i: number) => Promise<unknown>) => {
  let max = 0;
  for (let i = 0; i < times; i++) {
    const before = journal();
    await f(i);
    max = Math.max(max, journal() - before);
  }
  return max;
};

const escaped = '\u0001'; // JSON writes it as \u0001: 6 bytes for one code point
const content = escaped.repeat(defaults.messaging.max_length);
const note = escaped.repeat(500);
const conv = (await post('/messages/send', { recipient_pin: others[0]!.pin, content: 'hi' })).conversation_id as string;
const perWrite = {
  message: await bytesOf(5, () => post(`/conversations/${conv}/messages`, { content })),
  transfer: await bytesOf(5, () => post('/wallet/send', { recipient_pin: others[0]!.pin, amount: 0.01, note })),
  group: await bytesOf(5, (i) =>
    post('/conversations', {
      participant_pins: others.slice(0, defaults.messaging.max_group_size - 1).map((o) => o.pin),
      name: `${i}`.padStart(100, 'g'),
    }),
  ),
  introduction: await bytesOf(5, () =>
    post('/introductions', {
      participant_pins: others.slice(0, defaults.messaging.max_group_size).map((o) => o.pin),
      message: escaped.repeat(1000),
    }),
  ),
  contact_request: await bytesOf(5, (i) => post('/contacts/request', { pin_code: others[10 + i]!.pin })),
};

const perDay = (bucket: { limit: number; window: string }) =>
  Math.floor((86_400_000 / parseDuration(bucket.window)!) * bucket.limit);
const r = defaults.rate_limits;
const general = perDay(r.general);
const plan = [
  { kind: 'message', count: perDay(r.messages) },
  { kind: 'group', count: perDay(r.groups) },
  { kind: 'introduction', count: perDay(r.intros) },
  { kind: 'contact_request', count: perDay(r.contacts) },
] as const;
const used = plan.reduce((s, p) => s + p.count, 0);
const rows = [
  ...plan.map((p) => ({ ...p, bytes: perWrite[p.kind] })),
  { kind: 'transfer' as const, count: general - used, bytes: perWrite.transfer },
];
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
console.log(`largest journal bytes per write (Idempotency-Key of 255 characters: its stored answer included)`);
for (const [k, v] of Object.entries(perWrite))
  console.log(`  ${k.padEnd(16)} ${v.toLocaleString('en-US').padStart(8)} bytes`);
console.log(`\none user, one day, default limits (general ${general.toLocaleString('en-US')} requests a day)`);
let total = 0;
for (const row of rows) {
  total += row.count * row.bytes;
  console.log(
    `  ${row.kind.padEnd(16)} ${row.count.toLocaleString('en-US').padStart(8)} × ` +
      `${row.bytes.toLocaleString('en-US').padStart(6)} B = ` +
      `${mb(row.count * row.bytes).padStart(8)} MB`,
  );
}
console.log(`  ${'total'.padEnd(16)} ${''.padStart(27)} ${mb(total).padStart(8)} MB`);

// With quotas (config quotas.*): the text a user keeps is bytes_per_user in all, whatever the day;
// what remains per write is the row with the least text (a one-character message, a transfer
// without a note, an introduction without a message, a one-character group name), and groups
// stop at groups_per_user. Measured the same way, on the same store.
const q = defaults.quotas;
const bare = {
  message: await bytesOf(5, () => post(`/conversations/${conv}/messages`, { content: 'x' })),
  transfer: await bytesOf(5, () => post('/wallet/send', { recipient_pin: others[0]!.pin, amount: 0.01 })),
  group: await bytesOf(5, () =>
    post('/conversations', {
      participant_pins: others.slice(0, defaults.messaging.max_group_size - 1).map((o) => o.pin),
      name: 'g',
    }),
  ),
  introduction: await bytesOf(5, () =>
    post('/introductions', { participant_pins: others.slice(0, defaults.messaging.max_group_size).map((o) => o.pin) }),
  ),
  contact_request: perWrite.contact_request,
};
console.log(`
with quotas: bytes_per_user ${mb(q.bytes_per_user)} MB of text in all, groups_per_user ${
  q.groups_per_user
}, messages_per_conversation ${q.messages_per_conversation.toLocaleString('en-US')}`);
let quotaTotal = q.bytes_per_user;
console.log(`  ${'text (once)'.padEnd(16)} ${''.padStart(27)} ${mb(q.bytes_per_user).padStart(8)} MB`);
for (const row of rows) {
  const count = row.kind === 'group' ? Math.min(row.count, q.groups_per_user) : row.count;
  quotaTotal += count * bare[row.kind];
  console.log(
    `  ${row.kind.padEnd(16)} ${count.toLocaleString('en-US').padStart(8)} × ` +
      `${bare[row.kind].toLocaleString('en-US').padStart(6)} B = ` +
      `${mb(count * bare[row.kind]).padStart(8)} MB`,
  );
}
console.log(
  `  ${'total'.padEnd(16)} ${''.padStart(27)} ${mb(quotaTotal).padStart(8)} MB (the first day; then without the text)`,
);

server.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
