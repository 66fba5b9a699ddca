import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '../../bin/pinbot.js');
const MIDNIGHT = /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/;

// The person's path, end to end: the real CLI, a real `serve --virtual-clock` process, HTTP.
describe('pinbot serve --virtual-clock driven by the CLI', () => {
  const tmp = tempDir('pinbot-vclock-');
  const data = join(tmp.dir, 'data');
  const config = join(tmp.dir, 'config.yaml');
  let server: ChildProcess;
  let base = '';
  let alice: { pin_code: string; api_key: string };

  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [BIN, ...args, '--data', data, '--config', config, '--json']);
    return JSON.parse(stdout);
  };
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ubiCredits = async (key: string) =>
    (await api(key, 'GET', '/wallet/transactions?limit=200')).body.transactions.filter(
      (t: { type: string }) => t.type === 'ubi',
    );

  beforeAll(async () => {
    writeFileSync(config, 'log:\n  level: info\nrate_limits:\n  enabled: false\n');
    // A user made while no server runs (the CLI opens the store itself) …
    alice = await cli('users', 'add', '--name', 'Alice', '--balance', '20');
    server = spawn(
      process.execPath,
      [BIN, 'serve', '--virtual-clock', '--port', '0', '--no-bots', '--data', data, '--config', config],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    base = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
    });
  }, 60_000);
  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    tmp.cleanup();
  }, 60_000);

  it('send, pending, accept, decline, then UBI arrives with `clock advance`', { timeout: 120_000 }, async () => {
    const { pin_code: alicePin, api_key: aliceKey } = alice;
    // … and one made through the running server's admin socket.
    const bob = await cli('users', 'add', '--name', 'Bob');

    const sent = await api(aliceKey, 'POST', '/wallet/send', { recipient_pin: bob.pin_code, amount: 5, note: 'lunch' });
    expect(sent.status).toBe(201);
    const pending = await api(bob.api_key, 'GET', '/wallet/pending');
    expect(pending.body.pending_transactions).toEqual([
      expect.objectContaining({ id: sent.body.transaction.id, amount: 5, sender_pin: alicePin, note: 'lunch' }),
    ]);
    expect(
      (await api(bob.api_key, 'POST', `/wallet/transactions/${sent.body.transaction.id}/accept`)).body.transaction
        .status,
    ).toBe('accepted');
    const second = await api(aliceKey, 'POST', '/wallet/send', { recipient_pin: bob.pin_code, amount: 3 });
    expect((await api(aliceKey, 'POST', `/wallet/transactions/${second.body.transaction.id}/decline`)).status).toBe(
      403,
    );
    expect(
      (await api(bob.api_key, 'POST', `/wallet/transactions/${second.body.transaction.id}/decline`)).body.transaction
        .status,
    ).toBe('declined');

    const before = {
      alice: (await api(aliceKey, 'GET', '/wallet/balance')).body.balance,
      bob: (await api(bob.api_key, 'GET', '/wallet/balance')).body.balance,
    };
    expect(before.bob).toBe(5);
    const aliceUbiBefore = (await ubiCredits(aliceKey)).length;

    const { now: t1 } = await cli('clock', 'advance', '1d');
    expect((await api(aliceKey, 'GET', '/wallet/balance')).body.balance).toBe(before.alice + 1);
    expect((await api(bob.api_key, 'GET', '/wallet/balance')).body.balance).toBe(6);
    const [first] = await ubiCredits(bob.api_key);
    expect(first).toMatchObject({ type: 'ubi', amount: 1, status: 'accepted', direction: 'received', sender: null });
    expect(first.created_at).toMatch(MIDNIGHT);
    expect(first.note).toBe(`UBI for ${first.created_at.slice(0, 10)}`);
    expect(Date.parse(first.created_at)).toBeLessThanOrEqual(Date.parse(t1));
    expect(Date.parse(t1) - Date.parse(first.created_at)).toBeLessThan(86_400_000);

    // Three days: exactly three more credits each, one per midnight, in order.
    const { now: t4 } = await cli('clock', 'advance', '3d');
    expect(Date.parse(t4) - Date.parse(t1)).toBe(3 * 86_400_000);
    for (const key of [aliceKey, bob.api_key]) {
      const credits = await ubiCredits(key);
      expect(credits.length).toBe(key === aliceKey ? aliceUbiBefore + 4 : 4);
      const days = credits.slice(0, 4).map((t: { created_at: string }) => Date.parse(t.created_at));
      expect(days).toEqual([0, 1, 2, 3].map((k) => Date.parse(first.created_at) + (3 - k) * 86_400_000));
    }
    expect((await api(bob.api_key, 'GET', '/wallet/balance')).body.balance).toBe(9);

    // Operator grants print the grant transaction; the subscription command prints the subscription.
    const grant = await cli('users', 'grant', '--pin', bob.pin_code, '--amount', '2.50');
    expect(grant).toMatchObject({
      type: 'grant',
      amount: 2.5,
      status: 'accepted',
      recipient_pin: bob.pin_code,
      sender: null,
    });
    const sub = await cli('users', 'subscribe', '--pin', bob.pin_code, '--days', '10');
    expect(sub).toMatchObject({ is_subscribed: true, status: 'active' });
    expect((await api(bob.api_key, 'GET', '/wallet/subscription')).body).toEqual(sub);
    expect((await api(bob.api_key, 'GET', '/wallet/balance')).body.balance).toBe(11.5);
  });
});
