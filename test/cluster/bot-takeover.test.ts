import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { Messages } from '../../src/domain/messaging/collections.js';
import { Users } from '../../src/domain/users/users.js';
import { BotLeases, BotWorkers } from '../../src/deployment/bot-leases.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually, killAll, spawnServe, type ServeChild } from '../helpers/serve-child.js';
import { jsonClient } from '../sim/client.js';

const BOTS = 6;
const PER_BOT = 24;

/**
 * Three `pinbot serve` processes on one database share six bots out by lease. Messages to the
 * bots arrive through all three; one process is killed -9 mid-load. Its bots are taken over by
 * the others within the lease ttl, and every message gets exactly one answer: no event lost
 * (each is answered), none handled twice (no answer twice; the bots' cursors, inbox and
 * idempotency keys live in the database, so the new owner resumes where the dead one stopped).
 */
describe('bots across three processes on one database', () => {
  let servers: ServeChild[] = [];
  let observer: PgStore | undefined;
  const tmp = tempDir('pinbot-takeover-');

  beforeAll(async () => {
    const url = await testDatabase();
    const bots = join(tmp.dir, 'bots');
    mkdirSync(bots);
    for (let i = 0; i < BOTS; i++) {
      writeFileSync(
        join(bots, `relay-${i}.yaml`),
        `name: relay-${i}\nas: Relay ${i}\ncreate_user: true\npoll: 1s\nloop_guard: ` +
          `false\nrules:\n  - id: ack\n    on: message.received\n    do:\n      - ` +
          `reply: "ack {{ event.content }}"\n`,
      );
    }
    const config = join(tmp.dir, 'config.yaml');
    writeFileSync(
      config,
      `store:\n  driver: postgres\n  url: \${env:DATABASE_URL}\nrate_limits:\n  ` +
        `enabled: false\nbots:\n  dir: ${JSON.stringify(bots)}\n  lease_ttl: 2s\nlog:\n ` +
        ` level: info\n`,
    );
    servers = await Promise.all(
      [1, 2, 3].map((i) =>
        spawnServe(['--data', join(tmp.dir, `data${i}`), '--config', config], { DATABASE_URL: url }),
      ),
    );
    observer = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined });
  });
  afterAll(async () => {
    await killAll(servers);
    await observer?.close();
    tmp.cleanup();
  });

  /** Which server process holds each bot's lease now. */
  const owners = async () => {
    await observer!.durable();
    const out = new Map<string, number>();
    for (const l of observer!.read.col(BotLeases).all()) {
      const label = observer!.read.col(BotWorkers).get(l.owner)?.label ?? '';
      out.set(
        l.id,
        servers.findIndex((s) => label.endsWith(`:${s.proc.pid}`)),
      );
    }
    return out;
  };

  it('kill -9 of one process mid-load: its bots are taken over, every message is answered exactly once', {
    timeout: 120_000,
  }, async () => {
    onTestFailed(() =>
      servers.forEach((s, i) =>
        console.log(`--- server ${i} (pid ${s.proc.pid}), last lines:\n${s.lines.slice(-15).join('\n')}`),
      ),
    );
    // the bots are shared out: every bot has an owner, and each process runs some
    const spread = await eventually(
      async () => {
        const o = await owners();
        const per = [0, 1, 2].map((i) => [...o.values()].filter((x) => x === i).length);
        return o.size === BOTS && per.every((n) => n >= 1) ? o : undefined;
      },
      30_000,
      'the bots spread over the three processes',
    );
    const bots = await eventually(
      async () => {
        await observer!.durable();
        const users = Array.from({ length: BOTS }, (_, i) =>
          [...observer!.read.col(Users).all()].find((u) => u.display_name === `Relay ${i}`),
        );
        return users.every(Boolean) ? users.map((u) => u!) : undefined;
      },
      30_000,
      'the bots created their users',
    );
    const env = { clock: new VirtualClock(Date.now()), config: configFrom({}) };
    const sender = (await runAdminCommand({ store: observer!, env }, 'users.add', { name: 'Sender' })) as {
      api_key: string;
      id: string;
    };
    const victim = spread.get('relay-0')!;
    const clients = servers.map((s) => jsonClient(`${s.url}/api/v1`, 8));
    let sent = 0;
    let killedAt = 0;
    const send = async (bot: number, n: number) => {
      const content = `m-${bot}-${n}`;
      for (let k = n; ; k++) {
        const target = k % 3;
        if (killedAt && target === victim) continue;
        try {
          const r = await clients[target]!.call(
            'POST',
            '/messages/send',
            { 'X-API-Key': sender.api_key, 'Idempotency-Key': content },
            { recipient_pin: bots[bot]!.pin_code, content },
          );
          expect(r.status, r.text).toBe(201);
          return;
        } catch (err) {
          if (!killedAt) throw err; // no answer, and no process was killed
        }
      }
    };
    const loops = Array.from({ length: BOTS }, async (_, bot) => {
      for (let n = 0; n < PER_BOT; n++) {
        await send(bot, n);
        if (++sent === (BOTS * PER_BOT) / 3 && !killedAt) {
          killedAt = Date.now();
          servers[victim]!.proc.kill('SIGKILL');
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    await Promise.all(loops);
    clients.forEach((c) => c.close());
    expect((await servers[victim]!.exited).signal).toBe('SIGKILL');

    // its bots now run in the two others
    const after = await eventually(
      async () => {
        const o = await owners();
        return o.size === BOTS && [...o.values()].every((i) => i >= 0 && i !== victim) ? o : undefined;
      },
      30_000,
      "the dead process's bots taken over",
    );
    expect([...after.keys()].sort()).toEqual([...spread.keys()].sort());

    // every message answered, none twice
    const expected = Array.from({ length: BOTS }, (_, b) =>
      Array.from({ length: PER_BOT }, (_, n) => `ack m-${b}-${n}`),
    ).flat();
    const answers = await eventually(
      async () => {
        await observer!.durable();
        const counts = new Map<string, number>();
        for (const m of observer!.read.col(Messages).all())
          if (m.content.startsWith('ack ')) counts.set(m.content, (counts.get(m.content) ?? 0) + 1);
        return expected.every((c) => counts.has(c)) ? counts : undefined;
      },
      60_000,
      'every message answered',
    );
    const twice = [...answers].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    expect(answers.size).toBe(expected.length);
    console.log(
      `takeover: ${BOTS} bots, ` +
        `${[...spread.values()].filter((i) => i === victim).length} on the killed ` +
        `process; all ${expected.length} messages answered once, ` +
        `${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  });
});
