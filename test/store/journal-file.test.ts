import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAppendFile } from '../../src/store/file/journal-file.js';
import { tempDir } from '../helpers/api.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** The journal's file: appends, fdatasync, truncation, and a close that waits for what is in flight. */
describe('openAppendFile', () => {
  it('appends in order (to whatever the file held), syncs, truncates and reports its size', async () => {
    const t = tempDir('pinbot-append-');
    cleanups.push(t.cleanup);
    const path = join(t.dir, 'journal.jsonl');
    const first = await openAppendFile(path);
    await first.append(Buffer.from('one\n'));
    await first.close();
    const f = await openAppendFile(path);
    const big = Buffer.alloc(3 << 20, 0x61); // larger than one write may take at once
    // one append at a time, as the store makes them (concurrent ones may land in any order)
    await f.append(Buffer.from('two\n'));
    await f.append(big);
    await f.append(Buffer.from('\nthree\n'));
    await f.sync();
    expect(await f.size()).toBe(4 + 4 + big.length + 7);
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith('one\ntwo\naaa')).toBe(true);
    expect(text.endsWith('aaa\nthree\n')).toBe(true);
    await f.truncate(8);
    await f.append(Buffer.from('four\n'));
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nfour\n');
    await f.close();
    await f.close(); // a second close is harmless
  });

  it('close waits for appends and syncs in flight, so none lands on a closed (reused) descriptor', async () => {
    const t = tempDir('pinbot-append-');
    cleanups.push(t.cleanup);
    const path = join(t.dir, 'journal.jsonl');
    const f = await openAppendFile(path);
    const data = Buffer.alloc(8 << 20, 0x62);
    const appended = f.append(data);
    const synced = f.sync();
    await f.close();
    await expect(appended).resolves.toBeUndefined();
    await expect(synced).resolves.toBeUndefined();
    expect(readFileSync(path).length).toBe(data.length);
  });

  it('a failed append rejects with the system error', async () => {
    const t = tempDir('pinbot-append-');
    cleanups.push(t.cleanup);
    const f = await openAppendFile(join(t.dir, 'journal.jsonl'));
    await f.close();
    await expect(f.append(Buffer.from('late\n'))).rejects.toMatchObject({ code: 'EBADF' });
  });
});
