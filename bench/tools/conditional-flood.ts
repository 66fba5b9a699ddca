// Issue 21 item 2: what a flood of conditional reads from one key does to another user.
// node bin/run-ts.js bench/tools/conditional-flood.ts [SECONDS]
//
// Seeds a data dir (Alice and Bob share a conversation of 130 messages of 4,000 characters: a
// ~530 kB page), starts `pinbot serve` in its own process with the default rate limits, then for
// each attack (none, If-None-Match with the held tag, If-None-Match: *) runs 8 concurrent loops
// as Alice for SECONDS while Carol (a limit of her own) reads GET /me one request after another,
// and prints Carol's p50/p99 and what Alice's requests got. The attacks need no fresh window:
// the held tag spends `conditional` (before the fix: nothing), `*` spends `general`.
import { join } from 'node:path';
import { pino } from 'pino';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { sendDirect } from '../../src/domain/messaging/send.js';
import { startServer } from '../../src/server.js';
import { startPinbot } from '../harness/pinbot-server.js';
import { runDir } from '../harness/paths.js';

const seconds = Number(process.argv[2] ?? 10);
const tmp = runDir('conditional-flood');
const dataDir = join(tmp.dir, 'data');

const seed = await startServer({
  dataDir,
  config: configFrom({ rate_limits: { enabled: false } }),
  host: '127.0.0.1',
  port: 0,
  services: [],
  log: pino({ level: 'silent' }),
});
const keys = await seed.store.transaction((tx) => {
  const [alice, bob, carol] = ['Alice', 'Bob', 'Carol'].map((name) => createUser(tx, seed.env, { name }));
  return {
    alice: createKey(tx, seed.env, alice!.id).api_key,
    bob: bob!,
    carol: createKey(tx, seed.env, carol!.id).api_key,
    aliceUser: alice!,
  };
});
for (let i = 0; i < 130; i++)
  await seed.store.transaction((tx) =>
    sendDirect(tx, seed.env, keys.bob, { recipient_pin: keys.aliceUser.pin_code, content: `${i} ${'x'.repeat(3990)}` }),
  );
await seed.close();

const server = await startPinbot({
  runDir: tmp.dir,
  dataDir,
  config: { rate_limits: { enabled: true, users: { Carol: { general: 1_000_000 } } } },
});
const get = (key: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/v1${path}`, { headers: { 'X-API-Key': key, ...headers } });
try {
  const convs = (await (await get(keys.alice, '/conversations')).json()) as { conversations: Array<{ id: string }> };
  const page = `/conversations/${convs.conversations[0]!.id}/messages?limit=200`;
  const first = await get(keys.alice, page);
  const tag = first.headers.get('etag')!;
  console.log(`page ${page}: ${(await first.arrayBuffer()).byteLength} bytes, ETag ${tag}`);
  const attacks: Array<[string, Record<string, string> | undefined]> = [
    ['no flood', undefined],
    ['If-None-Match: <held tag>', { 'If-None-Match': tag }],
    ['If-None-Match: *', { 'If-None-Match': '*' }],
  ];
  for (const [name, headers] of attacks) {
    const until = performance.now() + seconds * 1000;
    const statuses: Record<number, number> = {};
    const flood = headers
      ? Array.from({ length: 8 }, async () => {
          while (performance.now() < until) {
            const r = await get(keys.alice, page, headers);
            await r.arrayBuffer();
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          }
        })
      : [];
    const times: number[] = [];
    while (performance.now() < until) {
      const t = performance.now();
      const r = await get(keys.carol, '/me');
      await r.arrayBuffer();
      times.push(performance.now() - t);
      await new Promise((res) => setTimeout(res, 20)); // Carol: 50 reads a second at most
    }
    await Promise.all(flood);
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(1);
    console.log(
      `${name.padEnd(28)} Carol GET /me p50 ${q(0.5)} ms, p99 ${q(0.99)} ms ` +
        `(${times.length} reads); Alice: ${JSON.stringify(statuses)}`,
    );
  }
} finally {
  await server.stop();
  tmp.cleanup();
}
