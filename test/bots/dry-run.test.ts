import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient } from '../../src/client/client.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { createBotsService } from '../../src/services/bots.js';
import { BotState } from '../../src/runtime/state/bot-state.js';
import type { Trace } from '../../src/runtime/state/traces.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';
import { eventually } from '../helpers/serve-child.js';

let w: BotWorld | undefined;
let server: RunningServer | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await w?.close();
  await server?.close();
  w = server = undefined;
  for (const c of cleanups.splice(0)) c();
});

const chatty = `name: chatty
as: Chatty
create_user: true
rules:
  - id: answer
    on: message.received
    do:
      - set: { seen: "{{ vars.seen | plus: 1 }}" }
      - reply: "you said {{ event.content }}"
      - send_message: { to: "{{ event.sender.pin_code }}", content: "and again" }
`;

describe('dry run', () => {
  it('polls and evaluates for real, traces what it would do, and changes nothing', async () => {
    w = await botWorld({ bots: { 'chatty.yaml': chatty }, host: { dryRun: true } });
    await w.host.start();
    await w.host.runner('chatty')!.started;
    await w.poll('chatty');
    const alice = await w.user('Alice');
    await alice.api.messages.send({ recipient_pin: w.botUser('chatty').pin_code, content: 'hello' });
    await w.poll('chatty');
    const [conv] = (await alice.api.conversations.list()).conversations;
    expect((await alice.api.conversations.messages(conv!.id)).messages.map((m) => m.content)).toEqual(['hello']);
    const [trace] = w.host.traces('chatty')!;
    expect(trace).toMatchObject({
      outcome: 'dry_run',
      steps: [
        { action: 'set', status: 'done', result: { seen: 1 } },
        { action: 'reply', status: 'dry_run', args: 'you said hello' },
        { action: 'send_message', status: 'dry_run', args: { to: alice.user.pin_code, content: 'and again' } },
      ],
    });
    expect(w.host.status()[0]).toMatchObject({ status: 'running', dry_run: true });
    // nothing of the bot's own state was persisted either: no cursor, no vars, no inbox
    const state = new BotState(w.server.store, 'chatty');
    expect(state.cursor('messages')).toBeUndefined();
    expect(state.meta().vars).toEqual({});
    expect(state.inbox()).toEqual([]);
  });

  it('a dry-run tip jar leaves transfers pending and balances as they were', async () => {
    const { readFileSync } = await import('node:fs');
    w = await botWorld({
      bots: { 'tip-jar.yaml': readFileSync(join(import.meta.dirname, '../../bots/tip-jar.yaml'), 'utf8') },
      host: { dryRun: true },
    });
    await w.host.start();
    await w.host.runner('tip-jar')!.started;
    const bob = await w.user('Bob', 20);
    const sent = await bob.api.wallet.send({ recipient_pin: w.botUser('tip-jar').pin_code, amount: 5 });
    await w.poll('tip-jar');
    await w.poll('tip-jar');
    expect((await bob.api.wallet.transactions()).transactions.find((t) => t.id === sent.transaction.id)!.status).toBe(
      'pending',
    );
    expect((await bob.api.wallet.balance()).balance).toBe(15);
    expect((await bob.api.conversations.list()).conversations).toEqual([]);
    const traces = w.host.traces('tip-jar')!;
    expect(traces.map((t) => `${t.rule} ${t.outcome}`).sort()).toEqual([
      'refuse-large-tips not_run',
      'thank-small-tips dry_run',
    ]);
    expect(traces.find((t) => t.rule === 'thank-small-tips')!.steps.map((x) => [x.action, x.status, x.args])).toEqual([
      ['accept', 'dry_run', null],
      ['reply', 'dry_run', 'Thank you Bob for the tip of 5!'],
      ['set', 'done', { tips: 1 }],
    ]);
  });

  it(
    'serve --dry-run (startServer({ dryRun: true })) makes every bot of the service a ' +
      'dry run; the admin socket answers status and traces',
    async () => {
      const tmp = tempDir();
      cleanups.push(tmp.cleanup);
      const bots = join(tmp.dir, 'bots');
      mkdirSync(bots);
      writeFileSync(join(bots, 'chatty.yaml'), chatty);
      const data = join(tmp.dir, 'data');
      server = await startServer({
        dataDir: data,
        config: configFrom({ rate_limits: { enabled: false }, bots: { dir: bots } }),
        port: 0,
        log: pino({ level: 'silent' }),
        dryRun: true,
        services: [createBotsService()],
      });
      const status = await eventually(async () => {
        const { bots: list } = (await callAdmin(data, 'bots.status')) as { bots: BotStatus[] };
        // running: its user's changes wake it (its first poll of messages waits for one)
        return list[0]?.status === 'running' ? list[0] : undefined;
      });
      expect(status).toMatchObject({ name: 'chatty', status: 'running', dry_run: true });
      const pin = /\(([A-Z0-9]{6})\)/.exec(status.message!)![1]!;
      const s = server;
      const key = await s.store.transaction((tx) => createKey(tx, s.env, createUser(tx, s.env, { name: 'Alice' }).id));
      const alice = createClient({ baseUrl: s.url, apiKey: key.api_key });
      await alice.messages.send({ recipient_pin: pin, content: 'hello' });
      const { traces } = (await eventually(async () => {
        const r = (await callAdmin(data, 'bots.trace', { name: 'chatty' })) as { traces: Trace[] };
        return r.traces.length ? r : undefined;
      })) as { traces: Trace[] };
      expect(traces[0]).toMatchObject({
        outcome: 'dry_run',
        steps: [{ status: 'done' }, { status: 'dry_run' }, { status: 'dry_run' }],
      });
      const [conv] = (await alice.conversations.list()).conversations;
      expect((await alice.conversations.messages(conv!.id)).messages).toHaveLength(1);
      await expect(callAdmin(data, 'bots.trace', { name: 'nobody' })).rejects.toThrow(
        'no bot named nobody has traces; see `pinbot bots list`',
      );
      // a near miss names the bot that was meant
      await expect(callAdmin(data, 'bots.trace', { name: 'chaty' })).rejects.toThrow(
        'no bot named chaty has traces; did you mean "chatty"? see `pinbot bots list`',
      );
    },
  );
});
