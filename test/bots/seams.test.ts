import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/runtime/registry.js';
import type { ActionDef, ConditionDef, SourceDef, TriggerDef } from '../../src/runtime/contract/types.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

/**
 * Every action, condition and poll source call runs under `runtime.step_timeout` and an error
 * boundary: a hang or a throw fails that call only, traced with the step named.
 */

let w: BotWorld;
afterEach(() => w?.close());

const never = () => new Promise<never>(() => undefined);

function registryWithSeams(calls: string[]) {
  const r = createRegistry();
  const action = (name: string, run: ActionDef['run']): ActionDef => ({
    name,
    description: name,
    schema: {},
    example: null,
    bare: true,
    effect: 'local',
    run,
  });
  r.addAction(action('test.hang', async () => never()));
  r.addAction(
    action('test.boom', () => {
      throw new Error('boom at once');
    }),
  );
  r.addAction(action('test.note', async (_args, ctx) => void calls.push(String(ctx.scope.event.content))));
  const hangs: ConditionDef = {
    name: 'test_hangs',
    description: 'never answers',
    schema: {},
    example: true,
    compile: () => () => never(),
  };
  r.addCondition(hangs);
  const stuck: SourceDef = { name: 'test_stuck', description: 'a source that never answers', poll: () => never() };
  r.addSource(stuck);
  const trigger: TriggerDef = { name: 'test.stuck', description: 'never fires', source: 'test_stuck', example: {} };
  r.addTrigger(trigger);
  return r.freeze();
}

async function world(rules: string) {
  const calls: string[] = [];
  w = await botWorld({
    host: { registry: registryWithSeams(calls), stepTimeoutMs: 150 },
    bots: { 'b.yaml': `name: b\nas: Desk\ncreate_user: true\nrules:\n${rules}` },
  });
  await w.host.start();
  await w.host.runner('b')!.started;
  await w.poll('b');
  const alice = await w.user('Alice');
  const send = (content: string) => alice.api.messages.send({ recipient_pin: w.botUser('b').pin_code, content });
  return { calls, send };
}

const traced = () =>
  w.host.traces('b')!.map((t) => ({ rule: t.rule, outcome: t.outcome, reason: t.reason, message: t.message }));

describe('timeouts and error boundaries at the seams', () => {
  it(
    'a hung action fails its step with reason timeout, the run stops there, and the ' + 'next event is handled',
    async () => {
      const { calls, send } = await world(
        `  - id: r\n    on: message.received\n    do:\n      - test.hang\n      - test.note\n`,
      );
      await send('one');
      await w.poll('b');
      expect(traced()).toEqual([
        {
          rule: 'r',
          outcome: 'failed',
          reason: 'timeout',
          message: expect.stringMatching(
            /^step 1 \(test\.hang\) of rule r took longer than 150 ms \(runtime\.step_timeout\)/,
          ),
        },
      ]);
      expect(calls).toEqual([]);
      const [trace] = w.host.traces('b')!;
      expect(trace!.steps).toMatchObject([{ action: 'test.hang', status: 'failed' }]);
      await send('again');
      await w.poll('b');
      expect(w.host.traces('b')).toHaveLength(2);
    },
  );

  it('an action that throws synchronously fails its step with reason failed, naming the step', async () => {
    const { calls, send } = await world(
      `  - id: r\n    on: message.received\n    do:\n      - test.boom\n      - ` +
        `test.note\n  - id: other\n    on: message.received\n    do:\n      - ` +
        `test.note\n`,
    );
    await send('two');
    await w.poll('b');
    const byRule = Object.fromEntries(traced().map((t) => [t.rule, t]));
    expect(byRule.r).toEqual({
      rule: 'r',
      outcome: 'failed',
      reason: 'failed',
      message: 'step 1 (test.boom) failed: boom at once',
    });
    expect(byRule.other).toMatchObject({ outcome: 'done' });
    expect(calls).toEqual(['two']);
  });

  it('conditions that hang fail the run with reason timeout, naming the rule', async () => {
    const { send } = await world(
      `  - id: picky\n    on: message.received\n    if: { test_hangs: true }\n    do:\n      - test.note\n`,
    );
    await send('three');
    await w.poll('b');
    expect(traced()).toEqual([
      {
        rule: 'picky',
        outcome: 'failed',
        reason: 'timeout',
        message: expect.stringMatching(/^the conditions of rule picky took longer than 150 ms/),
      },
    ]);
  });

  it('a hung poll source no longer freezes polling: the other sources are read and their events handled', async () => {
    const { calls, send } = await world(
      `  - id: stuck\n    on: test.stuck\n    do:\n      - test.note\n  - id: msg\n  ` +
        `  on: message.received\n    do:\n      - test.note\n`,
    );
    await send('four');
    await w.poll('b');
    await send('five');
    await w.poll('b');
    expect(calls).toEqual(['four', 'five']);
    expect(w.host.runner('b')!.polls).toBeGreaterThanOrEqual(3);
  });
});

describe('wake-up topics are typed (issue 28 item 5)', () => {
  it(
    'a source naming a topic the server never reports is refused when it registers, ' + 'with the topics that exist',
    () => {
      const r = createRegistry();
      const typo = {
        name: 'test_typo',
        description: 'a misspelt topic',
        topics: ['wallets'],
        poll: async () => ({ events: [], cursor: undefined }),
      } as unknown as SourceDef;
      expect(() => r.addSource(typo)).toThrow(
        'source test_typo: unknown topic "wallets"; topics are messages, wallet, introductions, contacts',
      );
      expect(r.sources.has('test_typo')).toBe(false);
    },
  );

  it('every built-in source names only topics that exist', () => {
    expect(() => createRegistry()).not.toThrow();
    expect([...createRegistry().sources.values()].flatMap((s) => s.topics ?? []).length).toBeGreaterThan(0);
  });
});
