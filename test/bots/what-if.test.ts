import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, loadBot, whatIf } from '../../src/runtime/index.js';
import { createTestWorld } from '../../src/testing/world.js';
import { DATA_DIR } from '../../src/util/data-dir.js';
import { tempDir } from '../helpers/api.js';
import { pinbot, ROOT } from '../helpers/spawn.js';

/**
 * What-if on the example tip jar: three tips recorded (3, 7, 12), then the cap edited from 10
 * to 5. Exactly the 7 changes (thanked before, refused now); the replay makes no request and
 * the store's journal does not grow.
 */
const tmp = tempDir('pinbot-what-if-');
afterAll(() => tmp.cleanup());
const TIP_JAR = readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8');
const EDITED = TIP_JAR.replace('amount: { max: 10 }', 'amount: { max: 5 }').replace(
  'amount: { min: 10.01 }',
  'amount: { min: 5.01 }',
);

describe('bots what-if', () => {
  it('shows the exact decisions an edited cap changes, from the recorded traces, and acts on nothing', async () => {
    expect(EDITED).not.toBe(TIP_JAR);
    const world = await createTestWorld({ users: { alice: { balance: 30 }, jar: {} } });
    try {
      await world.addBot(TIP_JAR.replace('as: Tip Jar', 'as: jar').replace('create_user: true', ''));
      const tips = [];
      for (const amount of [3, 7, 12]) {
        tips.push(await world.as('alice').pay('jar', amount));
        await world.advance('10s');
      }
      const traces = world.traces('tip-jar');
      expect(traces).toHaveLength(6);
      const journal = join(world.dataDir, DATA_DIR.journal);
      const size = statSync(journal).size;

      const { bot } = loadBot('edited.yaml', EDITED, { registry: createRegistry() });
      const r = await whatIf(bot!, traces);
      await world.settle();
      expect(statSync(journal).size).toBe(size); // nothing was written: no request that changes anything
      expect(r.summary).toBe('this edit changes 1 of the last 3 decisions of tip-jar');
      expect(r.events.map((e) => [e.event, e.status])).toEqual(
        tips.map((t, i) => [`transfer.received:${t.id}`, i === 1 ? 'changed' : 'same']),
      );
      expect(r.events[1]!.changes).toEqual([
        'rule thank-small-tips no longer runs: condition_false — amount max 5 (amount = 7)',
        'rule refuse-large-tips now runs (amount min 5.01 (amount = 7)); before: ' +
          'condition_false — amount min 10.01 (amount = 7) → steps: decline, reply ' +
          '"That is very generous, alice, but this jar only takes tips up to 10. Your 7 ' +
          'is on its way back."',
      ]);
      // the unchanged file changes nothing
      const same = await whatIf(loadBot('same.yaml', TIP_JAR, { registry: createRegistry() }).bot!, traces);
      expect(same.changed).toBe(0);
      expect(same.events.every((e) => e.status === 'same')).toBe(true);

      // the CLI, from the trace files: exit 1 on a change, 0 on none, --json
      await world.host.stop();
      const project = join(tmp.dir, 'project');
      mkdirSync(project, { recursive: true });
      cpSync(join(world.dataDir, DATA_DIR.bots), join(project, 'data', DATA_DIR.bots), { recursive: true });
      writeFileSync(join(project, 'config.yaml'), 'rate_limits: { enabled: true }\n');
      writeFileSync(join(project, 'edited.yaml'), EDITED);
      writeFileSync(join(project, 'same.yaml'), TIP_JAR);
      const args = ['--data', join(project, 'data'), '--config', join(project, 'config.yaml')];
      const changed = await pinbot(['bots', 'what-if', join(project, 'edited.yaml'), ...args]);
      expect(changed.code).toBe(1);
      expect(changed.stdout).toContain(`≠ ${r.events[1]!.at}  transfer.received 7 from alice`);
      expect(changed.stdout).toContain(
        '    rule thank-small-tips no longer runs: condition_false — amount max 5 (amount = 7)\n',
      );
      expect(changed.stdout.trim().split('\n').at(-1)).toBe('this edit changes 1 of the last 3 decisions of tip-jar');
      const json = await pinbot(['bots', 'what-if', join(project, 'edited.yaml'), '--json', '--last', '2', ...args]);
      expect(JSON.parse(json.stdout)).toMatchObject({
        bot: 'tip-jar',
        traces: 2,
        changed: 0,
        events: [{ status: 'same' }],
      });
      const none = await pinbot(['bots', 'what-if', join(project, 'same.yaml'), ...args]);
      expect(none.code).toBe(0);
      const bad = await pinbot(['bots', 'what-if', join(project, 'config.yaml'), ...args]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('is not a valid bot');
    } finally {
      await world.close();
    }
  }, 120_000);

  it('reads contact checks as recorded, and a condition reading something live (the ' +
    'wallet) fails closed and says so', async () => {
    const FRIENDS =
      'name: friends\nas: jar\nrules:\n  - id: friends\n    on: message.received\n    ' +
      'if: { from: contacts }\n    do:\n      - reply: "hi friend"\n';
    const world = await createTestWorld({ users: { alice: { contacts: ['jar'] }, jar: {} } });
    try {
      await world.addBot(FRIENDS);
      await world.as('alice').send('jar', 'hello');
      await world.advance('10s');
      const traces = world.traces('friends');
      expect(traces[0]).toMatchObject({ outcome: 'done', seen: { contacts: { [world.users.alice!.pin_code]: true } } });
      const edited =
        FRIENDS.replace('if: { from: contacts }', 'if: { not: { from: contacts } }') +
        ('  - id: rich\n    on: message.received\n    if: { liquid: "wallet.balance > ' +
          '5" }\n    do:\n      - reply: "rich"\n');
      const r = await whatIf(loadBot('friends.yaml', edited, { registry: createRegistry() }).bot!, traces);
      // alice was a contact when the bot decided: the edited rule reads that, and no longer runs
      expect(r.events[0]!.after[0]).toMatchObject({
        rule: 'friends',
        decision: 'condition_false',
        condition: expect.stringContaining('contacts'),
      });
      expect(r.events[0]!.changes).toEqual([
        `rule friends no longer runs: condition_false — ${r.events[0]!.after[0]!.condition}`,
      ]);
      expect(r.events[0]!.after[1]).toEqual({
        rule: 'rich',
        decision: 'condition_false',
        condition:
          'liquid wallet.balance > 5 (could not be evaluated: reads wallet, which the ' +
          'trace did not record, line:1, col:1)',
        steps: [],
      });
    } finally {
      await world.close();
    }
  }, 60_000);
});
