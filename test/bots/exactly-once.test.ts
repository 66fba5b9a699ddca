import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import type { Trace } from '../../src/runtime/state/traces.js';
import { tempDir } from '../helpers/api.js';
import { eventually, spawnServe, type ServeChild } from '../helpers/serve-child.js';

const children: ServeChild[] = [];
const temps: Array<() => void> = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) {
      c.proc.kill('SIGKILL');
      await c.exited;
    }
  }
  for (const t of temps.splice(0)) t();
});

/** A data dir, a bots dir and a config pointing at it. */
function setup(bot: string) {
  const tmp = tempDir('pinbot-crash-');
  temps.push(tmp.cleanup);
  const data = join(tmp.dir, 'data');
  const bots = join(tmp.dir, 'bots');
  mkdirSync(bots);
  writeFileSync(join(bots, 'bot.yaml'), bot);
  const config = join(tmp.dir, 'config.yaml');
  // safety_poll 1s: the bot polls on its own even when nothing wakes it (the test waits for a poll)
  writeFileSync(
    config,
    `rate_limits: { enabled: false }\nbots: { dir: ${JSON.stringify(bots)} ` +
      `}\nruntime: { safety_poll: 1s }\nlog: { level: info }\n`,
  );
  return { data, args: ['--data', data, '--config', config] };
}

/** Waits for a poll of the bot that finished after `after` (ISO). */
async function polled(data: string, name: string, after = ''): Promise<BotStatus> {
  return eventually(
    async () => {
      const { bots } = (await callAdmin(data, 'bots.status')) as { bots: BotStatus[] };
      const b = bots.find((x) => x.name === name);
      return b?.last_poll && b.last_poll > after ? b : undefined;
    },
    40_000,
    `${name} to poll`,
  );
}

const payer = `name: payer
as: Payer
create_user: true
poll: 1s
rules:
  - id: pay
    on: message.received
    do:
      - send_money: { to: "{{ event.sender.pin_code }}", amount: 2, note: "for {{ event.content }}" }
      - reply: "sent you {{ steps[0].transaction.amount }}"
`;

describe('exactly once across kill -9', () => {
  it('killed right after the payment, then right after the reply — each before it was ' +
    'recorded: one payment, one reply', {
    timeout: 120_000,
  }, async () => {
    const s = setup(payer);
    // 1st process: dies once the transfer has been made
    const first = await spawnServe(s.args, { PINBOT_CRASH_AT: 'after-action:payer:pay:0' });
    children.push(first);
    const bot = await polled(s.data, 'payer');
    const botPin = /\(([A-Z0-9]{6})\)/.exec(bot.message ?? '')![1]!;
    await callAdmin(s.data, 'users.grant', { pin: botPin, amount: '10' });
    const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string };
    await createClient({ baseUrl: first.url, apiKey: alice.api_key }).messages.send({
      recipient_pin: botPin,
      content: 'lunch',
    });
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    // 2nd process: resumes (the transfer is replayed, not repeated), dies once the reply has been sent
    const second = await spawnServe(s.args, { PINBOT_CRASH_AT: 'after-action:payer:pay:1' });
    children.push(second);
    expect(await second.exited).toMatchObject({ signal: 'SIGKILL' });

    // 3rd process: resumes the reply (replayed, not repeated) and finishes
    const third = await spawnServe(s.args);
    children.push(third);
    const api = createClient({ baseUrl: third.url, apiKey: alice.api_key });
    const done = await eventually(
      async () => {
        const { traces } = (await callAdmin(s.data, 'bots.trace', { name: 'payer' })) as { traces: Trace[] };
        return traces.find((t) => t.outcome === 'done');
      },
      40_000,
      'the resumed run to finish',
    );
    expect(done).toMatchObject({
      resumed: true,
      steps: [
        { action: 'send_money', status: 'done' },
        { action: 'reply', status: 'done' },
      ],
    });
    await polled(s.data, 'payer', new Date().toISOString()); // one more poll: nothing new may come of it
    expect((await api.wallet.pending()).pending_transactions.map((t) => [t.amount, t.note])).toEqual([
      [2, 'for lunch'],
    ]);
    const [conv] = (await api.conversations.list()).conversations;
    expect((await api.conversations.messages(conv!.id)).messages.map((m) => m.content)).toEqual([
      'lunch',
      'sent you 2',
    ]);
  });
});

const echo = `name: echo
as: Echo
create_user: true
poll: 1s
rules:
  - id: echo
    on: message.received
    do:
      - reply: "echo {{ event.content }}"
`;

/**
 * An embedded bot on the file store writes its progress without waiting for each write's own
 * fsync (its requests commit after it in the same journal): killed at either of those writes,
 * before it was durable, the bot still answers exactly once.
 */
describe('exactly once across kill -9 at writes not yet durable (an ordered store)', () => {
  for (const at of ['before-action:echo:echo:0', 'after-run:echo:echo']) {
    it(`killed at ${at}: one reply after the restart`, { timeout: 120_000 }, async () => {
      const s = setup(echo);
      const first = await spawnServe(s.args, { PINBOT_CRASH_AT: at });
      children.push(first);
      const bot = await polled(s.data, 'echo');
      const botPin = /\(([A-Z0-9]{6})\)/.exec(bot.message ?? '')![1]!;
      const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string };
      await createClient({ baseUrl: first.url, apiKey: alice.api_key }).messages.send({
        recipient_pin: botPin,
        content: 'hi',
      });
      expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

      const second = await spawnServe(s.args);
      children.push(second);
      const api = createClient({ baseUrl: second.url, apiKey: alice.api_key });
      // the reply (sent before the kill, or by the resumed run); the written but unsynced page of
      // the journal may survive a process kill, so the run may have nothing left to resume
      const contents = async () => {
        const [conv] = (await api.conversations.list()).conversations;
        return (await api.conversations.messages(conv!.id)).messages.map((m) => m.content);
      };
      await eventually(async () => (await contents()).includes('echo hi'), 40_000, 'the reply');
      // a resumed run goes before a later message of the same sender (mode queued)
      await api.messages.send({ recipient_pin: botPin, content: 'again' });
      await eventually(async () => (await contents()).includes('echo again'), 40_000, 'the second reply');
      expect(await contents()).toEqual(['hi', 'echo hi', 'again', 'echo again']);
      const { traces } = (await callAdmin(s.data, 'bots.trace', { name: 'echo' })) as { traces: Trace[] };
      expect(traces.filter((t) => t.outcome !== 'done')).toEqual([]);
      // at after-run the removal of the entry was held for the bot's next write (BotState.endLater),
      // never written: the run was resumed, its reply replayed by the server, not sent twice
      if (at.startsWith('after-run'))
        expect(traces.filter((t) => t.resumed).map((t) => [t.event.summary, t.outcome])).toEqual([
          [expect.stringContaining('hi'), 'done'],
        ]);
    });
  }
});
