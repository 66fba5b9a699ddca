import { afterAll, describe, expect, it } from 'vitest';
import type { AdminCommand } from '../../src/admin/commands.js';
import { callAdmin, listenAdmin } from '../../src/admin/socket.js';
import { testApi, tempDir } from '../helpers/api.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the admin socket (issue 13, item 14)', () => {
  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', '__defineGetter__'])(
    'answers %s as an unknown command, and sends nothing of its context back',
    async (name) => {
      const t = tempDir('pinbot-admin-');
      cleanups.push(t.cleanup);
      const api = await testApi({ memory: true });
      const extra: Record<string, AdminCommand> = { 'bots.list': async () => ({ bots: [] }) };
      const server = await listenAdmin(t.dir, { store: api.store, env: api.env, extra });
      cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
      await expect(callAdmin(t.dir, name, {}, 5_000)).rejects.toThrow(`unknown admin command ${name}`);
      // the real commands still answer, own and extra ones
      await expect(callAdmin(t.dir, 'users.list', {}, 5_000)).resolves.toEqual({ users: [] });
      await expect(callAdmin(t.dir, 'bots.list', {}, 5_000)).resolves.toEqual({ bots: [] });
    },
  );
});
