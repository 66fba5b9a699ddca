import { Writable } from 'node:stream';
import supertest from 'supertest';
import { createApp } from '../../src/api/app.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { createHttpServer } from '../../src/http-server.js';
import { createLogger } from '../../src/log.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';

/**
 * The API (rate limits off, a memory store, one user Alice) served as `serve` serves it, with
 * its log written at `level` into `lines` (one string per line), for tests of what is logged.
 *
 * @example const api = await loggedApi('info'); await api.http.get('/api/v1/me').set('X-API-Key', api.key);
 */
export async function loggedApi(level: 'info' | 'trace') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const { store, commits } = observeCommits(new MemoryStore());
  const config = configFrom({ rate_limits: { enabled: false } });
  const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config };
  const key = await store.transaction((tx) => createKey(tx, env, createUser(tx, env, { name: 'Alice' }).id).api_key);
  const { listener } = createApp({ store, commits, env, log: createLogger({ level, destination: sink }) });
  const http = supertest(createHttpServer(listener, config.server));
  return { http, key, lines, close: () => void sink.end() };
}
