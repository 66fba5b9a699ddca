import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import webhookIn from '../../plugins/webhook_in.js';
import { sign } from '../../plugins/lib/webhook-signature.js';
import { callAdmin } from '../../src/admin/socket.js';
import { configFrom } from '../../src/config/load.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { BotInbox, BotMetas } from '../../src/runtime/state/bot-state.js';
import { buildRegistry } from '../../src/services/registry.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually } from '../helpers/serve-child.js';

const SECRET = 'inbound-secret-0123456789';

/**
 * A plugin's push source with the bots shared out between processes: a webhook that reaches a
 * process which does not run the bot is queued in the bot's inbox in the database, and the
 * process that runs it handles it — once.
 */
describe('push sources across processes on one database', () => {
  it('a webhook sent to the process that does not run the bot is handled by the one that does, exactly once', {
    timeout: 30_000,
  }, async () => {
    const url = await testDatabase();
    const tmp = tempDir('pinbot-push-');
    mkdirSync(join(tmp.dir, 'bots'));
    writeFileSync(
      join(tmp.dir, 'bots', 'hooks.yaml'),
      'name: hooks\nas: Hooks\ncreate_user: true\nrules:\n  - id: count\n    on: ' +
        'webhook_in.received\n    do:\n      - set:\n          hits: "{{ vars.hits | ' +
        'default: 0 | plus: 1 }}"\n          last: "{{ event.body.title }}"\n',
    );
    const config = configFrom({
      store: { driver: 'postgres', url },
      bots: { dir: join(tmp.dir, 'bots'), lease_ttl: '600ms' },
      plugins: { config: { webhook_in: { secret: SECRET } } },
      log: { level: 'silent' },
    });
    const log = pino({ level: 'silent' });
    const servers: RunningServer[] = [];
    try {
      for (const d of ['d1', 'd2']) {
        const registry = await buildRegistry({ config, log, pluginsDir: false, plugins: [webhookIn] });
        servers.push(await startServer({ dataDir: join(tmp.dir, d), config, registry, port: 0, log }));
      }
      const status = async (i: number) =>
        ((await callAdmin(join(tmp.dir, `d${i + 1}`), 'bots.status')) as { bots: BotStatus[] }).bots.find(
          (b) => b.name === 'hooks',
        )!.status;
      // the process that does not run the bot
      const other = await eventually(
        async () => {
          const s = [await status(0), await status(1)];
          return s.includes('running') && s.includes('elsewhere') ? s.indexOf('elsewhere') + 1 : undefined;
        },
        20_000,
        'the bot running in one of the two',
      );
      const post = (body: string) =>
        fetch(`${servers[other - 1]!.url}/plugins/webhook_in/hooks`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-Pinbot-Signature': sign(SECRET, body, servers[other - 1]!.clock.now()),
          },
          body,
        });
      const body = JSON.stringify({ title: 'deploy done' });
      const r = await post(body);
      expect(r.status).toBe(202);
      expect(await r.json()).toMatchObject({ queued: true });
      const store = servers[0]!.store;
      const meta = await eventually(
        async () => {
          await store.durable();
          const m = store.read.col(BotMetas).get('hooks');
          return m?.vars.hits === 1 && store.read.col(BotInbox).ids('bot', 'hooks').length === 0 ? m : undefined;
        },
        15_000,
        'the pushed event handled by the process running the bot',
      );
      expect(meta.vars.last).toBe('deploy done');
      // the same webhook again (same body, same key): a duplicate, not a second run
      const again = await post(body);
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ duplicate: true });
      await new Promise((res) => setTimeout(res, 500));
      await store.durable();
      expect(store.read.col(BotMetas).get('hooks')!.vars.hits).toBe(1);
      // a bot that no process has is still unknown
      // (another body: the same signed request again, to any bot, is taken as a duplicate)
      const toNobody = JSON.stringify({ title: 'for nobody' });
      const none = await fetch(`${servers[other - 1]!.url}/plugins/webhook_in/nobody`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Pinbot-Signature': sign(SECRET, toNobody, servers[other - 1]!.clock.now()),
        },
        body: toNobody,
      });
      expect(none.status).toBe(404);
    } finally {
      for (const s of servers.reverse()) await s.close();
      tmp.cleanup();
    }
  });
});
