import { EventEmitter } from 'node:events';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { boundedDestination } from '../../src/log-destination.js';
import { createLogger, logDestination } from '../../src/log.js';
import { MemoryStore } from '../../src/store/core/memory-store.js';
import { observeCommits } from '../../src/store/core/commit-signal.js';

/** A stdout whose reader has stalled: it takes every chunk and reports none written until `drain()`. */
class StalledSink extends EventEmitter {
  chunks: string[] = [];
  write(data: string): boolean {
    this.chunks.push(data);
    return true;
  }
  drain(): void {
    const n = this.chunks.reduce((s, c) => s + Buffer.byteLength(c), 0);
    this.emit('write', n);
  }
  lines(): string[] {
    return this.chunks.join('').split('\n').filter(Boolean);
  }
}

describe('the log destination is bounded: a slow stdout costs dropped lines, never memory', () => {
  it('drops and counts lines past the bound, then reports the count once there is room', () => {
    const sink = new StalledSink();
    const dest = boundedDestination({ maxBytes: 64 * 1024, sink });
    const line = `${JSON.stringify({ level: 30, msg: 'x'.repeat(1000) })}\n`;
    for (let i = 0; i < 5_000; i++) dest.write(line);
    expect(dest.maxPending).toBeLessThanOrEqual(64 * 1024);
    const written = sink.lines().filter((l) => !l.includes('"dropped"'));
    expect(written.length).toBe(Math.floor((64 * 1024) / Buffer.byteLength(line)));
    expect(dest.dropped).toBe(5_000 - written.length);
    sink.drain();
    expect(dest.pending).toBe(0);
    dest.write(line);
    const reports = sink
      .lines()
      .filter((l) => l.includes('"dropped"'))
      .map((l) => JSON.parse(l) as { dropped: number });
    expect(reports.reduce((n, r) => n + r.dropped, 0)).toBe(dest.dropped);
    const [report, next] = sink
      .lines()
      .slice(-2)
      .map((l) => JSON.parse(l));
    expect(report).toMatchObject({ level: 40 });
    expect(report.msg).toMatch(/^log lines dropped/);
    expect(next.msg).toBe('x'.repeat(1000));
  });

  it('createLogger writes through it', () => {
    const sink = new StalledSink();
    const log = createLogger({ level: 'info', pretty: false, bufferBytes: 65_536, sink });
    for (let i = 0; i < 2_000; i++) log.info({ pad: 'p'.repeat(500) }, 'flood');
    expect(logDestination(log)!.maxPending).toBeLessThanOrEqual(65_536);
    expect(logDestination(log)!.dropped).toBeGreaterThan(1_800);
  });
});

describe('a keyless flood with 14 kB headers (issue 13, item 1), short version', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  async function serve(rateLimits: Record<string, unknown>) {
    const { store, commits } = observeCommits(new MemoryStore());
    const env = {
      clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')),
      config: configFrom({ rate_limits: rateLimits }),
    };
    const key = await store.transaction((tx) => createKey(tx, env, createUser(tx, env, { name: 'Alice' }).id).api_key);
    const sink = new StalledSink();
    const log = createLogger({ level: 'info', pretty: false, bufferBytes: 64 * 1024, sink });
    const server = createServer(createApp({ store, commits, env, log }).app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, key, sink, dest: logDestination(log)! };
  }

  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const get = (port: number, headers: Record<string, string>, path = '/api/v1/me') =>
    new Promise<number>((resolve, reject) => {
      const req = request({ agent, port, host: '127.0.0.1', path, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end();
    });
  const flood = async (port: number, n: number) => {
    const statuses: number[] = [];
    const pad = 'p'.repeat(14 * 1024);
    for (let i = 0; i < n; i += 8)
      statuses.push(...(await Promise.all(Array.from({ length: 8 }, () => get(port, { 'x-pad': pad })))));
    return statuses;
  };

  it('is refused per address after rate_limits.anonymous; refusals are not logged one by ' +
    'one; keyed users are served', async () => {
    const { port, key, sink, dest } = await serve({ enabled: true, anonymous: { limit: 30, window: '1h' } });
    const statuses = await flood(port, 400);
    expect(statuses.filter((s) => s === 401).length).toBe(30);
    expect(statuses.filter((s) => s === 429).length).toBe(370);
    // Someone with a key, from the same address, is not limited by the flood.
    expect(await get(port, { 'x-api-key': key })).toBe(200);
    // The next line written says how many were not.
    expect(await get(port, { 'x-api-key': key }, '/api/v1/nope')).toBe(404);
    const lines = sink.lines();
    // 30 × 401, the first 429, the summary of the 369 quiet ones, the 404: not 400 lines.
    expect(lines.length).toBe(33);
    expect(JSON.parse(lines[31]!)).toMatchObject({ level: 40, not_written: 369 });
    expect(lines.every((l) => l.length < 2_000 && !l.includes('pppp'))).toBe(true);
    expect(dest.maxPending).toBeLessThanOrEqual(64 * 1024);
  }, 30_000);

  it('with the rate limits off, the log buffer still holds at its bound and counts what it drops', async () => {
    const { port, sink, dest } = await serve({ enabled: false });
    const statuses = await flood(port, 400);
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(dest.maxPending).toBeLessThanOrEqual(64 * 1024);
    expect(dest.dropped).toBeGreaterThan(0);
    const requestLines = sink.lines().filter((l) => l.includes('"req"'));
    expect(requestLines.length + dest.dropped).toBe(400);
  }, 30_000);
});
