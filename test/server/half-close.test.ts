import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, type User } from '../../src/domain/users/users.js';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { Accounts } from '../../src/domain/wallet/accounts.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';
import { raw } from '../helpers/raw-http.js';

// Issue 21 item 9: a client that sent a POST and then closed its write side (a half-close, as
// `curl` and many proxies may do) got no answer, though the write committed (balance 10 → 9).

describe('a request followed by a half-close is answered', () => {
  const tmp = tempDir('pinbot-halfclose-');
  let server: RunningServer;
  let alice: { user: User; key: string };
  let bob: User;
  beforeAll(async () => {
    server = await startServer({
      dataDir: tmp.dir,
      config: configFrom({ rate_limits: { enabled: false } }),
      port: 0,
      log: pino({ level: 'silent' }),
      services: [],
    });
    ({ alice, bob } = await server.store.transaction((tx) => {
      const a = createUser(tx, server.env, { name: 'Alice' });
      grantMoney(tx, server.env, a.id, 1000);
      return {
        alice: { user: a, key: createKey(tx, server.env, a.id).api_key },
        bob: createUser(tx, server.env, { name: 'Bob' }),
      };
    }));
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  const balance = (u: User) => server.store.read.col(Accounts).get(u.id)?.balance_cents;

  it('POST /wallet/send then end(): the write commits once and its 201 arrives', async () => {
    expect(balance(alice.user)).toBe(1000);
    const body = JSON.stringify({ recipient_pin: bob.pin_code, amount: 1 });
    const answer = await raw(
      server.port,
      `POST /api/v1/wallet/send HTTP/1.1\r\nHost: x\r\nX-API-Key: ` +
        `${alice.key}\r\nContent-Type: application/json\r\nIdempotency-Key: ` +
        `half-1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { end: true },
    );
    expect(balance(alice.user)).toBe(900);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toMatchObject({ transaction: { amount: 1 } });
  });

  it('a GET then end() is answered too', async () => {
    const answer = await raw(
      server.port,
      `GET /api/v1/wallet/balance HTTP/1.1\r\nHost: x\r\nX-API-Key: ${alice.key}\r\n\r\n`,
      { end: true },
    );
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});
