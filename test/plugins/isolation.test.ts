import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from 'pinbot/testing';

/**
 * Every call into a plugin runs under a timeout and an error boundary: a throw, a rejection, a
 * hang or a garbage answer fails that step only, traced with the reason, the plugin and the
 * first frame of its own code; other bots and plugins run on. (Errors from a plugin's own
 * timers are caught at process level: crash-proof.test.ts runs that in a real `pinbot serve`.)
 */

const HOSTILE = 'test/plugins/fixtures/hostile.ts';
const BROKEN = 'test/plugins/fixtures/broken-setup.ts';
const FRAME = /^test\/plugins\/fixtures\/hostile\.ts:\d+:\d+$/;

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const caseRule = (action: string) =>
  `  - id: ${action}\n    on: message.received\n    if: { content: ${action} }\n    ` +
  `do:\n      - hostile.${action}: {}\n`;
const echo =
  'name: echo\nas: other\nrules:\n  - on: message.received\n    do:\n      - reply: "echo {{ event.content }}"\n';
const run = (w: TestWorld, bot: string, rule: string) =>
  w.traces(bot).find((t) => t.rule === rule && t.outcome !== 'not_run')!;

describe('a plugin that fails fails its step only', () => {
  it(
    'throws, rejects, hangs and garbage answers are traced with the plugin and its ' + 'frame; other bots run',
    async () => {
      const cases = [
        'ok',
        'throws',
        'rejects',
        'throws_string',
        'hangs',
        'cyclic',
        'function',
        'bigint',
        'hostile_getter',
      ];
      world = await createTestWorld({
        users: { alice: {}, victim: {}, other: {} },
        config: { rate_limits: { enabled: false }, plugins: { quarantine_after: 0 } },
        plugins: [HOSTILE],
        stepTimeoutMs: 300,
        bots: [`name: victim\nas: victim\nrules:\n${cases.map(caseRule).join('')}`, echo],
      });
      for (const c of cases) await world.as('alice').send('victim', c);
      await world.as('alice').send('other', 'still there?');
      await world.advance('5s');

      expect(run(world, 'victim', 'ok')).toMatchObject({
        outcome: 'done',
        steps: [{ status: 'done', result: { fine: true } }],
      });
      const throws = run(world, 'victim', 'throws');
      expect(throws).toMatchObject({
        outcome: 'failed',
        reason: 'plugin_failed',
        plugin: 'hostile',
        frame: expect.stringMatching(FRAME),
      });
      expect(throws.message).toMatch(
        new RegExp(
          String.raw`^step 1 \(hostile\.throws\) failed: plugin hostile: action ` +
            String.raw`hostile\.throws failed: thrown synchronously \(at ` +
            String.raw`test\/plugins\/fixtures\/hostile\.ts:\d+:\d+\)$`,
        ),
      );
      expect(throws.steps[0]).toMatchObject({ status: 'failed', plugin: 'hostile', frame: throws.frame });
      expect(run(world, 'victim', 'rejects')).toMatchObject({
        reason: 'plugin_failed',
        plugin: 'hostile',
        frame: expect.stringMatching(FRAME),
        message: expect.stringContaining('failed: rejected later'),
      });
      expect(run(world, 'victim', 'throws_string')).toMatchObject({
        reason: 'plugin_failed',
        message: expect.stringContaining('failed: a thrown string: just a string'),
      });
      expect(run(world, 'victim', 'hangs')).toMatchObject({
        outcome: 'failed',
        reason: 'plugin_timeout',
        plugin: 'hostile',
        message:
          'plugin hostile: step 1 (hostile.hangs) of rule hangs took longer than 300 ms ' +
          '(runtime.step_timeout) and was abandoned',
      });
      expect(run(world, 'victim', 'cyclic')).toMatchObject({
        reason: 'plugin_failed',
        message: expect.stringContaining('action hostile.cyclic returned something that is not JSON data'),
      });
      expect(run(world, 'victim', 'function')).toMatchObject({
        reason: 'plugin_failed',
        message: expect.stringContaining('action hostile.function returned a function; return JSON data'),
      });
      expect(run(world, 'victim', 'bigint')).toMatchObject({
        reason: 'plugin_failed',
        message: expect.stringContaining('returned something that is not JSON data'),
      });
      expect(run(world, 'victim', 'hostile_getter')).toMatchObject({
        reason: 'plugin_failed',
        message: expect.stringContaining('(getter threw)'),
      });

      // the other bot, and the plugin's healthy action, are untouched
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['echo still there?']);
      expect(world.plugins()[0]).toMatchObject({ name: 'hostile', status: 'running', failures: 8 });
    },
  );

  it('a condition that throws, hangs or answers garbage fails its rule with the plugin named', async () => {
    const bot = (name: string, cond: string) =>
      `name: ${name}\nas: ${name}\nrules:\n  - on: message.received\n    if: { ` +
      `hostile.${cond}: true }\n    do:\n      - reply: "never"\n`;
    world = await createTestWorld({
      users: { alice: {}, c1: {}, c2: {}, c3: {} },
      config: { rate_limits: { enabled: false }, plugins: { quarantine_after: 0 } },
      plugins: [HOSTILE],
      stepTimeoutMs: 300,
      bots: [bot('c1', 'throws'), bot('c2', 'garbage'), bot('c3', 'hangs')],
    });
    for (const u of ['c1', 'c2', 'c3']) await world.as('alice').send(u, 'hi');
    await world.advance('5s');
    expect(world.traces('c1')[0]).toMatchObject({
      outcome: 'failed',
      reason: 'plugin_failed',
      plugin: 'hostile',
      frame: expect.stringMatching(FRAME),
      message: expect.stringContaining('condition hostile.throws failed: condition threw'),
    });
    expect(world.traces('c2')[0]).toMatchObject({
      outcome: 'failed',
      reason: 'plugin_failed',
      message: expect.stringContaining('must answer true, false or { ok, detail }, not a thrown string: yes'),
    });
    expect(world.traces('c3')[0]).toMatchObject({
      outcome: 'failed',
      reason: 'plugin_timeout',
      plugin: 'hostile',
      message:
        'plugin hostile: the conditions of rule rule-1 took longer than 300 ms ' +
        '(runtime.step_timeout) and was abandoned',
    });
    expect(await world.inbox('alice')).toEqual([]);
  });

  it(
    'after plugins.quarantine_after failures in a row the plugin is quarantined: its ' +
      'calls fail at once, and the list says so',
    async () => {
      world = await createTestWorld({
        users: { alice: {}, victim: {} },
        config: { rate_limits: { enabled: false }, plugins: { quarantine_after: 2 } },
        plugins: [HOSTILE],
        bots: [`name: victim\nas: victim\nrules:\n${caseRule('throws')}${caseRule('ok')}`],
      });
      await world.as('alice').send('victim', 'ok');
      await world.as('alice').send('victim', 'throws');
      await world.advance('5s');
      expect(world.plugins()[0]).toMatchObject({
        status: 'running',
        message: expect.stringContaining('1 failure(s) in a row'),
      });
      await world.as('alice').send('victim', 'throws');
      await world.advance('5s');
      expect(world.plugins()[0]).toMatchObject({
        status: 'quarantined',
        message: expect.stringMatching(
          /^2 consecutive failures; the last: plugin hostile: action hostile\.throws failed: thrown synchronously/,
        ),
      });
      await world.as('alice').send('victim', 'ok');
      await world.advance('5s');
      const last = world.traces('victim').at(-1)!;
      expect(last).toMatchObject({ rule: 'ok', outcome: 'failed', reason: 'plugin_unavailable', plugin: 'hostile' });
      expect(last.message).toContain(
        'plugin hostile: action hostile.ok was not called: the plugin is quarantined (2 consecutive failures',
      );
    },
  );

  it('a plugin whose setup throws is disabled with a clear message; the other plugins and bots run', async () => {
    world = await createTestWorld({
      users: { alice: {}, a: {}, b: {} },
      plugins: [BROKEN, HOSTILE],
      bots: [
        'name: a\nas: a\nrules:\n  - on: message.received\n    do:\n      - broken.hi: {}\n',
        'name: b\nas: b\nrules:\n  - on: message.received\n    do:\n      - hostile.ok: {}\n',
      ],
    });
    expect(world.plugins().map((p) => [p.name, p.status, p.message])).toEqual([
      [
        'broken',
        'disabled',
        expect.stringMatching(
          new RegExp(
            String.raw`^setup failed: plugin broken: setup failed: cannot reach the thing ` +
              String.raw`it needs \(at test\/plugins\/fixtures\/broken-setup\.ts:\d+:\d+\)$`,
          ),
        ),
      ],
      ['hostile', 'running', undefined],
    ]);
    await world.as('alice').send('a', 'hi');
    await world.as('alice').send('b', 'hi');
    await world.advance('5s');
    expect(world.traces('a')[0]).toMatchObject({ outcome: 'failed', reason: 'plugin_unavailable', plugin: 'broken' });
    expect(world.traces('b')[0]).toMatchObject({ outcome: 'done' });
  });
});
