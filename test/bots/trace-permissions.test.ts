import { appendFileSync, chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/file-store.js';
import { readTraces, TraceLog, type Trace } from '../../src/runtime/state/traces.js';
import { tempDir } from '../helpers/api.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const mode = (p: string) => statSync(p).mode & 0o777;
const trace = (i: number): Trace => ({
  bot: 'tip-jar',
  version: '1',
  rule: 'thanks',
  event: { key: `k${i}`, type: 'message.received', summary: 'message.received "a private message"' },
  at: '2026-11-21T12:00:00.000Z',
  outcome: 'done',
  steps: [],
  duration_ms: 1,
});

describe('bot state on disk is private (issue 13, item 10)', () => {
  it('trace files are 0600 in 0700 folders, also after the history is rewritten', async () => {
    const t = tempDir('pinbot-traces-');
    cleanups.push(t.cleanup);
    const file = join(t.dir, 'bots', 'traces', 'tip-jar.jsonl');
    const log = TraceLog.open(file, 2);
    for (let i = 0; i < 3; i++) log.add(trace(i));
    await log.flush();
    expect(mode(file)).toBe(0o600);
    expect(mode(join(t.dir, 'bots', 'traces'))).toBe(0o700);
    expect(mode(join(t.dir, 'bots'))).toBe(0o700);
    for (let i = 3; i < 8; i++) log.add(trace(i)); // past twice the limit: the file is rewritten
    await log.close();
    expect(mode(file)).toBe(0o600);
  });

  it('tightens trace files and folders an older pinbot left 0644 / 0755', async () => {
    const t = tempDir('pinbot-traces-');
    cleanups.push(t.cleanup);
    const dir = join(t.dir, 'traces');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const file = join(dir, 'old.jsonl');
    writeFileSync(file, JSON.stringify(trace(0)) + '\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const log = TraceLog.open(file, 10);
    expect(log.list()).toHaveLength(1);
    expect(mode(file)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
    await log.close();
  });

  it('the state store of remote bots (data/bots/remote) is created 0700', async () => {
    const t = tempDir('pinbot-traces-');
    cleanups.push(t.cleanup);
    const store = await FileStore.open(join(t.dir, 'bots', 'remote'));
    cleanups.push(() => store.close());
    expect(mode(join(t.dir, 'bots'))).toBe(0o700);
    expect(mode(join(t.dir, 'bots', 'remote'))).toBe(0o700);
  });
});

describe('the trace file of a bot', () => {
  it('holds every trace once its write is done, in order; a line torn by a crash goes at the rewrite', async () => {
    const t = tempDir('pinbot-traces-');
    cleanups.push(t.cleanup);
    const file = join(t.dir, 'traces', 'tip-jar.jsonl');
    const log = TraceLog.open(file, 3);
    log.add(trace(0));
    log.add(trace(1));
    await log.flush();
    expect(readTraces(file, 10).map((x) => x.event.key)).toEqual(['k0', 'k1']);
    await log.close();
    appendFileSync(file, '{"bot":"tip-jar","ver'); // a crash mid-append
    const again = TraceLog.open(file, 3);
    expect(again.list().map((x) => x.event.key)).toEqual(['k0', 'k1']);
    for (let i = 2; i < 6; i++) again.add(trace(i)); // past twice the limit: rewritten to the newest 3
    await again.flush();
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).length).toBeLessThanOrEqual(6);
    expect(
      readTraces(file, 10)
        .map((x) => x.event.key)
        .slice(-3),
    ).toEqual(['k3', 'k4', 'k5']);
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean))
      expect(() => JSON.parse(line)).not.toThrow();
    await again.close();
  });
});
