import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createUser } from '../../src/domain/users/users.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';
import { spawnNode } from '../helpers/spawn.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('pinbot serve refuses a data directory whose db.json is missing (issue 13, item 3)', () => {
  it('prints one line saying what is wrong and what to do, exit code 1, and changes nothing', {
    timeout: 60_000,
  }, async () => {
    const live = tempDir('pinbot-refuse-live-');
    const image = tempDir('pinbot-refuse-');
    cleanups.push(live.cleanup, image.cleanup);
    const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config: configFrom({}) };
    const store = await FileStore.open(live.dir);
    cleanups.push(() => store.close());
    await store.transaction((tx) => createUser(tx, env, { name: 'Alice' }));
    await store.compact(); // Alice is in db.json now
    await store.transaction((tx) => createUser(tx, env, { name: 'Bob' }));
    cpSync(live.dir, image.dir, { recursive: true }); // what a crash leaves
    rmSync(join(image.dir, 'db.json'));
    rmSync(join(image.dir, 'pinbot.lock')); // its process is alive here; after a crash it is not
    const journal = readFileSync(join(image.dir, 'journal.jsonl'));

    const child = spawnNode(['bin/pinbot.js', 'serve', '--port', '0', '--no-bots', '--data', image.dir]);
    cleanups.push(() => void child.proc.kill('SIGKILL'));
    // Serving would be the bug: stop there rather than wait for the test's time-out.
    const first = await Promise.race([
      child.exited.then(() => 'exited'),
      child.waitFor(/listening on/).then(
        () => 'listening',
        () => 'exited',
      ),
    ]);
    expect(first, 'it must refuse, not serve').toBe('exited');
    const { code } = await child.exited;
    expect(code).toBe(1);
    expect(child.stdout()).toBe('');
    const lines = child.stderr().split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(readFileSync(join(image.dir, 'journal.jsonl'))).toEqual(journal);
    expect(existsSync(join(image.dir, 'db.json'))).toBe(false);
    expect(lines[0]).toMatch(
      new RegExp(
        String.raw`^pinbot: .*journal\.jsonl:1: db\.json is missing, but the journal ` +
          String.raw`starts at transaction 2, not 1: .*Start-up refused .*Put db\.json back ` +
          String.raw`\(from a backup\)`,
      ),
    );
  });
});
