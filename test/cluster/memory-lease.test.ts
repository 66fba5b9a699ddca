import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createClient } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { BotMemories } from '../../src/runtime/state/bot-records.js';
import type { MemoryView } from '../../src/services/bot-memory.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually, killAll, spawnServe, type ServeChild } from '../helpers/serve-child.js';

const counter = `name: counter
as: Counter
create_user: true
poll: 1s
memory: { ttl: 30d }
rules:
  - id: count
    on: message.received
    do:
      - remember: { seen: "{{ memory.seen | default: 0 | plus: 1 }}" }
      - reply: "seen you {{ memory.seen }} times"
`;

/**
 * Two `pinbot serve` processes on one database; the counter bot's lease is held by one. Its
 * memory lives in the database with the rest of its state: when its process is killed -9, the
 * other takes the bot over and remembers what the first wrote.
 */
describe('memory on PostgreSQL, across processes', () => {
  let servers: ServeChild[] = [];
  let observer: PgStore | undefined;
  const tmp = tempDir('pinbot-memory-pg-');
  afterAll(async () => {
    await killAll(servers);
    await observer?.close();
    tmp.cleanup();
  });

  it('the memory of a leased bot moves with the lease; any process shows and forgets it', {
    timeout: 120_000,
  }, async () => {
    const url = await testDatabase();
    const bots = join(tmp.dir, 'bots');
    mkdirSync(bots);
    writeFileSync(join(bots, 'counter.yaml'), counter);
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(
      config,
      `store:\n  driver: postgres\n  url: \${env:DATABASE_URL}\nrate_limits:\n  ` +
        `enabled: false\nbots:\n  dir: ${JSON.stringify(bots)}\n  lease_ttl: ` +
        `2s\nruntime: { safety_poll: 1s }\nlog:\n  level: info\n`,
    );
    servers = await Promise.all(
      [1, 2].map((i) => spawnServe(['--data', join(tmp.dir, `data${i}`), '--config', config], { DATABASE_URL: url })),
    );
    onTestFailed(() => servers.forEach((s, i) => console.log(`--- server ${i}:\n${s.lines.slice(-15).join('\n')}`)));
    observer = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined });
    const dataOf = (i: number) => join(tmp.dir, `data${i + 1}`);
    // which live process runs the bot, as each process says (an object: `eventually` takes 0 for "not yet")
    const owner = async (): Promise<{ i: number } | undefined> => {
      for (const [i, s] of servers.entries()) {
        if (s.proc.exitCode !== null || s.proc.signalCode !== null) continue;
        const { bots: status } = (await callAdmin(dataOf(i), 'bots.status')) as { bots: BotStatus[] };
        if (status.find((b) => b.name === 'counter')?.status === 'running') return { i };
      }
      return undefined;
    };
    const { i: first } = await eventually(owner, 30_000, 'a process to take the bot');
    const botUser = await eventually(
      async () => {
        const { users } = (await callAdmin(dataOf(first), 'users.list')) as {
          users: Array<{ display_name: string; pin_code: string }>;
        };
        return users.find((u) => u.display_name === 'Counter');
      },
      30_000,
      'the bot user',
    );
    const env = { clock: new VirtualClock(Date.now()), config: configFrom({}) };
    const alice = (await runAdminCommand({ store: observer, env }, 'users.add', { name: 'Alice' })) as {
      api_key: string;
      pin_code: string;
    };
    const other = 1 - first;
    // alice writes through the process that does not run the bot
    const api = createClient({ baseUrl: servers[other]!.url, apiKey: alice.api_key });
    const replies = async (n: number) =>
      eventually(
        async () => {
          const [conv] = (await api.conversations.list()).conversations;
          const m = conv
            ? (await api.conversations.messages(conv.id)).messages
                .filter((x) => x.sender.pin_code === botUser.pin_code)
                .map((x) => x.content)
            : [];
          return m.length >= n ? m : undefined;
        },
        60_000,
        `${n} replies`,
      );
    await api.messages.send({ recipient_pin: botUser.pin_code, content: 'hi' });
    expect(await replies(1)).toEqual(['seen you 1 times']);
    await api.messages.send({ recipient_pin: botUser.pin_code, content: 'hi' });
    expect(await replies(2)).toEqual(['seen you 1 times', 'seen you 2 times']);

    servers[first]!.proc.kill('SIGKILL');
    await servers[first]!.exited;
    expect(
      await eventually(async () => ((await owner())?.i === other ? true : undefined), 30_000, 'the takeover'),
    ).toBe(true);
    await api.messages.send({ recipient_pin: botUser.pin_code, content: 'hi' });
    expect(await replies(3)).toEqual(['seen you 1 times', 'seen you 2 times', 'seen you 3 times']);

    // the survivor's admin command shows it, and forgets it in the database
    const data = dataOf(other);
    const view = (await callAdmin(data, 'bots.memory', { name: 'counter', person: alice.pin_code })) as MemoryView;
    expect(view).toMatchObject({
      usage: { keys: 1, ttl_ms: 30 * 86_400_000 },
      subjects: [{ subject: alice.pin_code, entries: { seen: { value: 3 } } }],
    });
    await callAdmin(data, 'bots.memory', { name: 'counter', person: alice.pin_code, forget_all: true });
    // gone from the database's table itself
    const rows = await observer.pool.query(`SELECT count(*) AS n FROM "${observer.schema}".${BotMemories.name}`);
    expect(Number(rows.rows[0].n)).toBe(0);
    await api.messages.send({ recipient_pin: botUser.pin_code, content: 'hi' });
    expect((await replies(4)).at(-1)).toBe('seen you 1 times');
  });
});
