import { afterEach, describe, expect, it } from 'vitest';
import { botWorld, hostOver, T0, type BotWorld } from '../helpers/bots.js';
import type { Client } from '../../src/client/client.js';

let w: BotWorld;
afterEach(() => w?.close());

const bot = (rules: string, extra = '') => `name: b\nas: Desk\ncreate_user: true\n${extra}rules:\n${rules}`;

/** Starts the world with one bot `b`, takes the baseline poll, returns Alice and the bot's PIN. */
async function setup(rules: string, extra = '') {
  w = await botWorld({ bots: { 'b.yaml': bot(rules, extra) } });
  await w.host.start();
  await w.host.runner('b')!.started;
  await w.poll('b');
  const alice = await w.user('Alice');
  return { alice, pin: w.botUser('b').pin_code };
}

async function transcript(api: Client): Promise<string[]> {
  const { conversations } = await api.conversations.list();
  const out: string[] = [];
  for (const c of conversations.reverse())
    for (const m of (await api.conversations.messages(c.id)).messages)
      out.push(`${m.sender.display_name}: ${m.content}`);
  return out;
}

const traces = () => w.host.traces('b')!.map((t) => [t.rule, t.outcome, t.reason ?? '']);
/** Traces of the runs of one event, by rule (runs of one event finish in any order). */
const byRule = (list: string[][]) => [...list].sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

describe('rules', () => {
  it('cooldown: a rule that ran is skipped until the cooldown has passed (bot clock)', async () => {
    const { alice, pin } = await setup(
      `  - id: hello\n    on: message.received\n    cooldown: 1h\n    do:\n      - ` +
        `reply: "hello {{ event.content }}"\n`,
    );
    await alice.api.messages.send({ recipient_pin: pin, content: 'a' });
    await alice.api.messages.send({ recipient_pin: pin, content: 'b' });
    await w.poll('b');
    w.clock.set(T0 + 3_600_000);
    await alice.api.messages.send({ recipient_pin: pin, content: 'c' });
    await w.poll('b');
    expect(await transcript(alice.api)).toEqual(['Alice: a', 'Alice: b', 'Desk: hello a', 'Alice: c', 'Desk: hello c']);
    expect(traces()).toEqual([
      ['hello', 'done', ''],
      ['hello', 'not_run', 'cooldown'],
      ['hello', 'done', ''],
    ]);
  });

  it('mode single skips events while a run is going; queued runs them in order', async () => {
    const { alice, pin } = await setup(
      `  - id: one\n    mode: single\n    on: message.received\n    do:\n      - ` +
        `wait: 10m\n      - reply: "single {{ event.content }}"\n` +
        (`  - id: all\n    on: message.received\n    do:\n      - wait: 10m\n      - ` +
          `reply: "queued {{ event.content }}"\n`),
    );
    await alice.api.messages.send({ recipient_pin: pin, content: 'a' });
    await alice.api.messages.send({ recipient_pin: pin, content: 'b' });
    await w.poll('b');
    expect(traces()).toEqual([['one', 'not_run', 'single_running']]);
    // advance returns once every run it woke has settled: no polling for the outcome
    await w.clock.advanceTo(T0 + 10 * 60_000);
    expect(await transcript(alice.api)).toHaveLength(4);
    // the queued run for "b" starts its 10 minute wait once the run for "a" has finished
    const { BotState } = await import('../../src/runtime/state/bot-state.js');
    const e = new BotState(w.server.store, 'b').inbox().find((x) => x.event.payload.content === 'b');
    expect(e?.runs.all?.steps[0]?.status).toBe('started');
    const waiting = e!.runs.all!.steps[0]!.args as { until: number };
    expect(waiting.until).toBe(T0 + 20 * 60_000);
    await w.clock.advanceTo(waiting.until - 1);
    expect(await transcript(alice.api)).toHaveLength(4);
    await w.clock.advanceTo(waiting.until);
    expect(await transcript(alice.api)).toHaveLength(5);
    const t = await transcript(alice.api);
    expect(t.slice(0, 2)).toEqual(['Alice: a', 'Alice: b']);
    expect(t.slice(2, 4).sort()).toEqual(['Desk: queued a', 'Desk: single a']);
    expect(t[4]).toBe('Desk: queued b');
  });

  it('a failed step stops the run, unless it says continue_on_error', async () => {
    const { alice, pin } = await setup(
      `  - id: strict\n    on: message.received\n    do:\n      - send_message: { ` +
        `to: ZZZZZZ, content: x }\n      - reply: strict\n` +
        (`  - id: lenient\n    on: message.received\n    do:\n      - send_message: { ` +
          `to: ZZZZZZ, content: x }\n        continue_on_error: true\n      - reply: ` +
          `lenient\n`),
    );
    await alice.api.messages.send({ recipient_pin: pin, content: 'go' });
    await w.poll('b');
    expect(await transcript(alice.api)).toEqual(['Alice: go', 'Desk: lenient']);
    const [strict, lenient] = w.host.traces('b')!;
    expect(strict).toMatchObject({
      rule: 'strict',
      outcome: 'failed',
      reason: 'api',
      steps: [{ action: 'send_message', status: 'failed' }],
    });
    expect(strict!.steps[0]!.error).toContain('user_not_found');
    expect(lenient).toMatchObject({
      rule: 'lenient',
      outcome: 'done',
      steps: [{ status: 'failed' }, { status: 'done' }],
    });
  });

  it('set keeps variables across events and restarts; templates see vars, steps and me', async () => {
    const rules =
      `  - id: count\n    on: message.received\n    do:\n      - set: { count: "{{ ` +
      `vars.count | plus: 1 }}" }\n      - reply: "{{ me.display_name }} counted {{ ` +
      `vars.count }} (set {{ steps[0].count }})"\n`;
    const { alice, pin } = await setup(rules, 'vars: { count: 10 }\n');
    await alice.api.messages.send({ recipient_pin: pin, content: 'x' });
    await w.poll('b');
    await w.host.stop();
    const again = hostOver(w);
    await again.start();
    await again.runner('b')!.started;
    await alice.api.messages.send({ recipient_pin: pin, content: 'y' });
    await again.runner('b')!.pollNow();
    await again.stop();
    expect(await transcript(alice.api)).toEqual([
      'Alice: x',
      'Desk: Desk counted 11 (set 11)',
      'Alice: y',
      'Desk: Desk counted 12 (set 12)',
    ]);
  });

  it('from: a PIN list or contacts; liquid expressions; disabled rules are traced', async () => {
    const { alice, pin } = await setup(
      `  - id: contacts-only\n    on: message.received\n    if: { from: contacts }\n ` +
        `   do: [{ reply: "hi contact" }]\n` +
        (`  - id: long\n    on: message.received\n    if: { liquid: ` +
          `"event.content.size > 3 and event.sender.display_name == 'Alice'" }\n    do: ` +
          `[{ reply: "long one" }]\n`) +
        `  - id: off\n    enabled: false\n    on: message.received\n    do: [{ reply: never }]\n`,
    );
    await alice.api.messages.send({ recipient_pin: pin, content: 'hey' });
    await w.poll('b');
    expect(byRule(traces())).toEqual([
      ['contacts-only', 'not_run', 'condition_false'],
      ['long', 'not_run', 'condition_false'],
      ['off', 'not_run', 'disabled'],
    ]);
    expect(w.host.traces('b')!.find((t) => t.rule === 'contacts-only')!.conditions!.detail).toBe(
      `${alice.user.pin_code} (Alice) is not a contact and not listed`,
    );
    // become contacts: Alice asks, the bot's user accepts (through a key of its own)
    const req = await alice.api.contacts.request({ pin_code: pin });
    const { createKey } = await import('../../src/domain/users/keys.js');
    const { createClient } = await import('../../src/client/client.js');
    const key = await w.server.store.transaction((tx) => createKey(tx, w.server.env, w.botUser('b').id));
    await createClient({ baseUrl: w.server.url, apiKey: key.api_key }).contacts.acceptRequest(req.id);
    await alice.api.messages.send({ recipient_pin: pin, content: 'hello there' });
    await w.poll('b');
    expect(byRule(traces().slice(3))).toEqual([
      ['contacts-only', 'done', ''],
      ['long', 'done', ''],
      ['off', 'not_run', 'disabled'],
    ]);
  });

  it('startup fires once per start', async () => {
    const alice = await (async () => {
      w = await botWorld();
      return w.user('Alice');
    })();
    w.writeBot(
      'b.yaml',
      bot(
        `  - on: startup\n    do:\n      - send_message: { to: ` +
          `${alice.user.pin_code}, content: "up #{{ event.boot }}" }\n`,
      ),
    );
    await w.host.start();
    await w.host.runner('b')!.idle();
    expect(await transcript(alice.api)).toEqual(['Desk: up #1']);
  });
});
