import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { scenarioFromTrace } from '../../src/scenario/from-trace.js';
import { loadAll, runAll } from '../../src/scenario/run-all.js';
import { createTestWorld } from '../../src/testing/world.js';
import { DATA_DIR } from '../../src/util/data-dir.js';
import { tempDir } from '../helpers/api.js';
import { pinbot, ROOT } from '../helpers/spawn.js';

/**
 * A run of the example tip jar turned into a scenario: it recreates the tip (alice with the
 * balance it needs, the jar, the bot file) and expects the accept and the thank-you; it passes
 * against the unchanged bot and fails once the bot is broken.
 */
const tmp = tempDir('pinbot-from-trace-');
afterAll(() => tmp.cleanup());
const TIP_JAR = readFileSync(join(ROOT, 'bots/tip-jar.yaml'), 'utf8');

async function runScenarioFile(file: string) {
  const { scenarios, problems } = await loadAll([file]);
  expect(problems).toEqual([]);
  return (await runAll(scenarios, { parallel: 1 })).results[0]!;
}

describe('a run turned into a scenario', () => {
  it('passes against the unchanged bot, fails after the bot is broken; the CLI writes ' +
    'the same from the recorded traces', async () => {
    const project = join(tmp.dir, 'project');
    mkdirSync(join(project, 'bots'), { recursive: true });
    mkdirSync(join(project, 'scenarios'));
    writeFileSync(join(project, 'config.yaml'), `bots: { dir: ${join(project, 'bots')} }\n`);
    writeFileSync(join(project, 'bots/tip-jar.yaml'), TIP_JAR);
    const world = await createTestWorld({ users: { Alice: { balance: 30 }, jar: {} } });
    try {
      await world.addBot(TIP_JAR.replace('as: Tip Jar', 'as: jar').replace('create_user: true', ''));
      const tx = await world.as('Alice').pay('jar', 4, 'coffee');
      await world.advance('10s');
      const traces = world.traces('tip-jar');
      expect(traces.map((t) => [t.rule, t.outcome])).toEqual(
        expect.arrayContaining([
          ['thank-small-tips', 'done'],
          ['refuse-large-tips', 'not_run'],
        ]),
      );

      const text = scenarioFromTrace({ traces, run: tx.id, botFile: '../bots/tip-jar.yaml' });
      const doc = parse(text);
      expect(doc.users).toEqual({ Alice: { balance: 4 }, jar: {} });
      expect(doc.bots).toEqual([{ file: '../bots/tip-jar.yaml', as: 'jar' }]);
      expect(doc.steps).toEqual([
        {
          name: 'Alice sends the transfer the bot received',
          as: 'Alice',
          request: 'POST /wallet/send',
          body: { recipient_pin: '{{ users.jar.pin_code }}', amount: 4, note: 'coffee' },
          expect: { status: 201 },
        },
        { expect_event: { transfer: { from: 'Alice', to: 'jar', status: 'accepted' }, within: '1m' } },
        {
          expect_event: {
            message: { from: 'jar', to: 'Alice', content: 'Thank you Alice for the tip of 4!' },
            within: '1m',
          },
        },
      ]);
      expect(doc.description).toContain('rule refuse-large-tips did not run: condition_false');
      expect(doc.description).toContain('rule thank-small-tips step 2 (set) is not checked');

      const file = join(project, 'scenarios/incident.yaml');
      writeFileSync(file, text);
      expect((await runScenarioFile(file)).status).toBe('passed');
      // broken: the cap is lowered, so the 4 is refused
      writeFileSync(
        join(project, 'bots/tip-jar.yaml'),
        TIP_JAR.replace('max: 10 }', 'max: 3 }').replace('min: 10.01 }', 'min: 3.01 }'),
      );
      const broken = await runScenarioFile(file);
      expect(broken.status).toBe('failed');
      expect(broken.steps.find((s) => s.status === 'failed')?.label).toMatch(/expect_event transfer/);
      writeFileSync(join(project, 'bots/tip-jar.yaml'), TIP_JAR);

      // the CLI, from the data directory's trace files (the bots stopped: their traces are written), by `last`
      await world.host.stop();
      const data = join(project, 'data');
      cpSync(join(world.dataDir, DATA_DIR.bots), join(data, DATA_DIR.bots), { recursive: true });
      const cli = await pinbot([
        'bots',
        'trace',
        'tip-jar',
        '--scenario',
        'last',
        '--data',
        data,
        '--config',
        join(project, 'config.yaml'),
        '--out',
        join(project, 'scenarios/cli.yaml'),
      ]);
      expect(cli.stderr).toContain('wrote ');
      expect(cli.code).toBe(0);
      expect(parse(readFileSync(join(project, 'scenarios/cli.yaml'), 'utf8')).steps).toEqual(doc.steps);
      const unknown = await pinbot([
        'bots',
        'trace',
        'tip-jar',
        '--scenario',
        'txn_nope',
        '--data',
        data,
        '--config',
        join(project, 'config.yaml'),
      ]);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain(
        `no run of this bot for "txn_nope" in its recorded traces; the latest are:\n  transfer.received:${tx.id}`,
      );
    } finally {
      await world.close();
    }
  }, 120_000);
});
