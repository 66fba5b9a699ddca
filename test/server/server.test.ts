import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { meRoutes } from '../../src/api/me/routes.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { startServer } from '../../src/server.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';

describe('startServer / close', () => {
  it('close() lets an in-flight request finish, refuses new connections, then writes the snapshot', async () => {
    const tmp = tempDir('pinbot-server-');
    try {
      const server = await startServer({
        dataDir: tmp.dir,
        config: configFrom({ rate_limits: { enabled: false } }),
        port: 0,
        log: pino({ level: 'silent' }),
        routes: [...meRoutes, ...testRoutes],
        services: [],
      });
      const key = await server.store.transaction(
        (tx) => createKey(tx, server.env, createUser(tx, server.env, { name: 'Alice' }).id).api_key,
      );
      const body = JSON.stringify({ text: 'sent while stopping' });
      // A request whose body is still arriving when the stop begins.
      const req = request({
        port: server.port,
        method: 'POST',
        path: '/api/v1/test/notes',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      const response = new Promise<{ status: number; connection: string | undefined; text: string }>(
        (resolve, reject) => {
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, text }));
          });
          req.on('error', reject);
        },
      );
      const arrived = new Promise((resolve) => server.http.once('request', resolve));
      req.write(body.slice(0, 10));
      await arrived;
      const closed = server.close();
      // New connections are refused at once.
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
      req.end(body.slice(10));
      const res = await response;
      expect(res.status).toBe(201);
      expect(res.connection).toBe('close');
      expect(JSON.parse(res.text).notes[0].text).toBe('sent while stopping');
      await closed;
      expect(existsSync(join(tmp.dir, 'db.json'))).toBe(true);
      expect(existsSync(join(tmp.dir, 'pinbot.lock'))).toBe(false);
      const store = await FileStore.open(tmp.dir);
      expect(store.read.col(Notes).count()).toBe(1);
      await store.close();
    } finally {
      tmp.cleanup();
    }
  });
});
