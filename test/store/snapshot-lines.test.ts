import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SnapshotFile, type Snapshot } from '../../src/store/file/snapshot-file.js';

describe('snapshot file read back line by line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-snap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // ~3 MB of records with multi-byte characters, so lines and characters straddle the reader's
  // 1 MB chunks at arbitrary points.
  const users = [{ id: 'usr_1', name: 'Zoë' }];
  const snapshot: Snapshot = {
    schema_version: 1,
    seq: 7,
    collections: {
      notes: Array.from({ length: 6000 }, (_, i) => ({
        id: `note_${i}`,
        text: `${'é🙂ü'.repeat(i % 97)} ${i} ${'x'.repeat(i % 400)}`,
      })),
      empty: [],
      users,
    },
  };

  /** Reads `file`, failing if it was parsed whole (the fallback) rather than line by line. */
  async function readStreamed(file: string) {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const snap = await new SnapshotFile(file).read();
      expect(parse.mock.calls.every(([text]) => String(text).length < 1 << 20)).toBe(true);
      return snap;
    } finally {
      parse.mockRestore();
    }
  }

  it('reads back exactly what it wrote, across chunk boundaries', async () => {
    const file = join(dir, 'db.json');
    await new SnapshotFile(file).write(snapshot);
    expect(readFileSync(file).length).toBeGreaterThan(3 << 20);
    expect(await readStreamed(file)).toEqual(snapshot);
  });

  it('reads a copy with CRLF line endings the same', async () => {
    const file = join(dir, 'db.json');
    const crlf = join(dir, 'crlf.json');
    writeFileSync(crlf, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
    expect(await readStreamed(crlf)).toEqual(snapshot);
  });
});
