import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import type { PluginReport } from '../../src/plugin-api/host.js';
import type { Trace } from '../../src/runtime/state/traces.js';
import { tempDir } from '../helpers/api.js';
import { eventually, spawnServe, type ServeChild } from '../helpers/serve-child.js';

/**
 * Nothing a plugin does stops `pinbot serve`: a real process loads a plugin that throws from
 * its own timers (in setup and in an action), rejects where no one awaits, throws, rejects,
 * hangs and answers garbage in its actions and HTTP routes — and keeps serving, running the
 * other bot, and saying which plugin failed where.
 */

const FIXTURES = join(import.meta.dirname, 'fixtures/crash');
const step = (a: string) => `      - { stray.${a}: {}, continue_on_error: true }\n`;

let child: ServeChild;
let dataDir: string;
let cleanup: () => void;

beforeAll(async () => {
  const tmp = tempDir('pinbot-crash-');
  cleanup = tmp.cleanup;
  dataDir = join(tmp.dir, 'data');
  const bots = join(tmp.dir, 'bots');
  mkdirSync(bots);
  writeFileSync(
    join(bots, 'victim.yaml'),
    `name: victim\nas: Victim\ncreate_user: true\nrules:\n  - id: all\n    on: ` +
      `startup\n    do:\n${['throws', 'rejects', 'hangs', 'garbage', 'timer'].map(step).join('')}`,
  );
  writeFileSync(
    join(bots, 'other.yaml'),
    'name: other\nas: Other\ncreate_user: true\nrules:\n  - on: startup\n    do:\n      - log: still here\n',
  );
  const config = join(tmp.dir, 'config.yaml');
  writeFileSync(
    config,
    `plugins: { dir: ${JSON.stringify(FIXTURES)}, quarantine_after: 0 }\nbots: { ` +
      `dir: ${JSON.stringify(bots)} }\nruntime: { step_timeout: 500ms }\nlog: { level: ` +
      `info }\n`,
  );
  child = await spawnServe(['--data', dataDir, '--config', config]);
}, 60_000);

afterAll(async () => {
  child?.proc.kill('SIGTERM');
  await child?.exited;
  cleanup?.();
});

const logged = (re: RegExp) => child.lines.filter((l) => re.test(l));

describe('pinbot serve with a hostile plugin', () => {
  it("keeps running through stray errors from the plugin's timers, each attributed to the plugin", async () => {
    await eventually(() => logged(/uncaught error from its own code/).length >= 3, 15_000, 'the three stray errors');
    const stray = logged(/uncaught error from its own code/).join('\n');
    expect(stray).toMatch(
      new RegExp(
        String.raw`plugin stray: uncaught error from its own code \(a timer, event or ` +
          String.raw`promise it started\): setup timer threw \(at ` +
          String.raw`test\/plugins\/fixtures\/crash\/stray\.ts:\d+:\d+\)`,
      ),
    );
    expect(stray).toContain('setup timer rejected');
    expect(stray).toContain('action timer threw');
    const health = await fetch(`${child.url}/api/v1/me`);
    expect(health.status).toBe(401); // the API still answers
  });

  it('traces each failing step with its reason; the other bot ran', async () => {
    const trace = await eventually(
      async () => ((await callAdmin(dataDir, 'bots.trace', { name: 'victim' })) as { traces: Trace[] }).traces[0],
      15_000,
      'the trace of victim',
    );
    expect(trace.steps.map((s) => [s.action, s.status])).toEqual([
      ['stray.throws', 'failed'],
      ['stray.rejects', 'failed'],
      ['stray.hangs', 'failed'],
      ['stray.garbage', 'failed'],
      ['stray.timer', 'done'],
    ]);
    expect(trace.steps[0]).toMatchObject({
      plugin: 'stray',
      frame: expect.stringMatching(/^test\/plugins\/fixtures\/crash\/stray\.ts:\d+:\d+$/),
    });
    expect(trace.steps[2]!.error).toBe(
      'plugin stray: step 3 (stray.hangs) of rule all took longer than 500 ms (runtime.step_timeout) and was abandoned',
    );
    const other = ((await callAdmin(dataDir, 'bots.trace', { name: 'other' })) as { traces: Trace[] }).traces;
    expect(other[0]).toMatchObject({ outcome: 'done' });
  });

  it('its routes that throw, hang or answer garbage get 500, 504, 500; the others answer', async () => {
    const get = async (path: string) => {
      const r = await fetch(`${child.url}/plugins/stray${path}`);
      return [r.status, ((await r.json()) as { error?: { code: string } }).error?.code ?? 'ok'];
    };
    expect(await get('/ok')).toEqual([200, 'ok']);
    expect(await get('/throw')).toEqual([500, 'plugin_failed']);
    expect(await get('/hang')).toEqual([504, 'plugin_timeout']);
    expect(await get('/garbage')).toEqual([500, 'plugin_failed']);
    expect(await get('/nope')).toEqual([404, 'not_found']);
    const list = ((await callAdmin(dataDir, 'plugins.status')) as { plugins: PluginReport[] }).plugins;
    expect(list).toEqual([
      expect.objectContaining({ name: 'stray', status: 'running', source: 'test/plugins/fixtures/crash/stray.ts' }),
    ]);
    expect(list[0]!.failures).toBeGreaterThanOrEqual(10);
    expect(child.proc.exitCode).toBeNull();
  });
});
