import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callAdmin, listenAdmin } from '../../src/admin/socket.js';
import { testApi, tempDir } from '../helpers/api.js';
import { pinbot } from '../helpers/spawn.js';

/**
 * `users add` with a display name another user has is refused without --allow-duplicate: a
 * second "Alice" would make `as: Alice` bots and scripts ambiguous later, without warning
 * (issue 20, item 10). Both ways the CLI runs the command: the admin socket of a running server,
 * and the store opened directly.
 */

const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('users add: one display name, one user unless --allow-duplicate', { timeout: 60_000 }, () => {
  it('through the admin socket of a running server', async () => {
    const t = tempDir('pinbot-dup-');
    cleanups.push(t.cleanup);
    const api = await testApi({ memory: true });
    const server = await listenAdmin(t.dir, { store: api.store, env: api.env });
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const first = (await callAdmin(t.dir, 'users.add', { name: 'Alice' }, 5_000)) as { pin_code: string };
    await expect(callAdmin(t.dir, 'users.add', { name: ' alice ' }, 5_000)).rejects.toThrow(
      `a user named "Alice" already exists (PIN ${first.pin_code}): a second one ` +
        `makes the name ambiguous, and bots or scripts that name it (as: alice) would ` +
        `have to use the PIN. Choose another name, or add --allow-duplicate to create ` +
        `it anyway`,
    );
    // nothing was created
    expect(((await callAdmin(t.dir, 'users.list', {}, 5_000)) as { users: unknown[] }).users).toHaveLength(1);
    const second = (await callAdmin(t.dir, 'users.add', { name: 'Alice', allow_duplicate: true }, 5_000)) as {
      pin_code: string;
      warning: string;
    };
    expect(second.warning).toBe(
      `2 users are now named "Alice" (${first.pin_code}, ${second.pin_code}): name them by PIN`,
    );
  });

  it('on the data directory directly (no server), from the command line', async () => {
    const t = tempDir('pinbot-dup-cli-');
    cleanups.push(t.cleanup);
    const data = join(t.dir, 'data');
    const first = await pinbot(['users', 'add', '--name', 'Alice', '--json', '--data', data]);
    expect(first.code).toBe(0);
    const again = await pinbot(['users', 'add', '--name', 'Alice', '--data', data]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(
        String.raw`^pinbot: a user named "Alice" already exists \(PIN [A-Z0-9]{6}\): .* ` +
          String.raw`add --allow-duplicate to create it anyway\n$`,
      ),
    );
    const forced = await pinbot(['users', 'add', '--name', 'Alice', '--allow-duplicate', '--data', data]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(
      /\nwarning: 2 users are now named "Alice" \([A-Z0-9]{6}, [A-Z0-9]{6}\): name them by PIN\n$/,
    );
  });
});
