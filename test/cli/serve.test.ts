import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { pinbot, serve, type Child } from '../helpers/spawn.js';

// One `pinbot serve` for the whole file; CLI commands reach it through its admin socket.
describe('pinbot serve and the CLI against a running server', { timeout: 120_000 }, () => {
  const tmp = tempDir('pinbot-serve-');
  const data = join(tmp.dir, 'data');
  let server: Child;
  let url: string;
  beforeAll(async () => {
    ({ child: server, url } = await serve(data, ['--no-bots']));
  }, 120_000);
  afterAll(async () => {
    if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
    tmp.cleanup();
  });

  const me = (key: string) => fetch(`${url}/api/v1/me`, { headers: { 'X-API-Key': key } });
  const cli = (...args: string[]) => pinbot([...args, '--data', data]);

  it('prints `listening on http://HOST:PORT` with the port picked by --port 0, and serves', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
    const res = await fetch(`${url}/healthz`);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(statSync(join(data, 'pinbot.sock')).mode & 0o777).toBe(0o600);
  });

  let alice: { id: string; pin_code: string; api_key: string };
  it('users add --json goes through the admin socket; the key works at once', async () => {
    const add = await cli('users', 'add', '--name', 'Alice', '--json');
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout.endsWith('\n') && add.stdout.trim().split('\n')).toHaveLength(1);
    alice = JSON.parse(add.stdout);
    expect(Object.keys(alice)).toEqual(['id', 'display_name', 'pin_code', 'api_key']);
    expect(alice).toMatchObject({
      display_name: 'Alice',
      pin_code: expect.stringMatching(/^[A-Z0-9]{6}$/),
      api_key: expect.stringMatching(/^pinbot_/),
    });
    expect((await me(alice.api_key)).status).toBe(200);
  });

  it('keys create / list / revoke through the socket; a revoked key is refused by the very next request', async () => {
    const created = JSON.parse((await cli('keys', 'create', '--pin', alice.pin_code.toLowerCase(), '--json')).stdout);
    expect(Object.keys(created)).toEqual(['id', 'api_key']);
    expect((await me(created.api_key)).status).toBe(200);

    const list = JSON.parse((await cli('keys', 'list', '--pin', alice.pin_code, '--json')).stdout);
    expect(list.keys).toHaveLength(2);
    const used = list.keys.find((k: { id: string }) => k.id === created.id);
    expect(Object.keys(used)).toEqual(['id', 'created_at', 'last_used_at', 'revoked_at']);
    expect(used.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/); // kept in the server's memory, shown at once
    expect(used.revoked_at).toBeNull();

    const revoke = await cli('keys', 'revoke', created.id);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toBe(`revoked ${created.id}\n`);
    const after = await me(created.api_key);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await me(alice.api_key)).status).toBe(200);

    const users = JSON.parse((await cli('users', 'list', '--json')).stdout);
    expect(users).toEqual({ users: [{ id: alice.id, display_name: 'Alice', pin_code: alice.pin_code }] });
  });

  it.concurrent('operator mistakes go to stderr with exit code 1 and nothing on stdout', async () => {
    const r = await cli('keys', 'list', '--pin', 'ZZZZZZ', '--json');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('pinbot: no user has the PIN ZZZZZZ; see `pinbot users list`\n');
    const c = await cli('clock', 'advance', '1d');
    expect(c.code).toBe(1);
    expect(c.stderr).toBe(
      'pinbot: this server runs on the real clock; restart it with `pinbot serve --virtual-clock`\n',
    );
  });

  it.concurrent('a second serve on the same data directory fails in one line, exit 1', async () => {
    const r = await pinbot(['serve', '--data', data, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `pinbot: data directory ${data} is in use by another pinbot process (pid ` +
        `${server.proc.pid}). Stop that process, or pass --data DIR to use another ` +
        `directory.\n`,
    );
  });

  it.concurrent('a serve on a port in use fails in one line, exit 1', async () => {
    const port = new URL(url).port;
    const other = join(tmp.dir, 'other');
    const r = await pinbot(['serve', '--data', other, '--port', port]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `pinbot: port ${port} on 127.0.0.1 is already in use. Stop the other process, ` +
        `or start with --port N (--port 0 picks a free port).\n`,
    );
    // It let go of its own data directory on the way out.
    expect(existsSync(join(other, 'pinbot.lock'))).toBe(false);
  });

  it('SIGTERM stops it cleanly: exit 0, db.json written, lock and socket gone', async () => {
    server.proc.kill('SIGTERM');
    const { code, signal } = await server.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const snap = JSON.parse(readFileSync(join(data, 'db.json'), 'utf8'));
    expect(snap.schema_version).toBe(2);
    expect(JSON.parse(readFileSync(join(data, 'format'), 'utf8'))).toEqual({ format: 2 });
    expect(snap.collections.users.map((u: { display_name: string }) => u.display_name)).toEqual(['Alice']);
    // last use of the keys was flushed at shutdown
    expect(
      snap.collections.api_keys.filter((k: { last_used_at: number | null }) => k.last_used_at !== null),
    ).toHaveLength(2);
    expect(statSync(join(data, 'journal.jsonl')).size).toBe(0);
    expect(existsSync(join(data, 'pinbot.lock'))).toBe(false);
    expect(existsSync(join(data, 'pinbot.sock'))).toBe(false);
  });
});

describe('pinbot serve and SIGINT', { timeout: 120_000 }, () => {
  it('Ctrl-C (SIGINT) also stops it with exit 0', async () => {
    const tmp = tempDir('pinbot-sigint-');
    try {
      const { child } = await serve(tmp.dir, ['--no-bots']);
      child.proc.kill('SIGINT');
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(existsSync(join(tmp.dir, 'db.json'))).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });
});
