import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { DATA_FORMAT } from '../../src/store/file/data-format.js';
import { DataFormatError, StoreDamagedError } from '../../src/store/core/errors.js';
import { FileStore } from '../../src/store/file/file-store.js';
import type { StoredRecord } from '../../src/store/core/types.js';
import { tempDir } from '../helpers/api.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * Upgrades that never lose data. test/fixtures/data-format-1 was written by pinbot 0.1.0 (data
 * format 1, before formats were recorded): `users add` Alice (balance 100) and Bob, then a
 * `serve` that took a message each way and a transfer of 7 from Alice, killed with SIGKILL —
 * so its snapshot holds the users and its journal the rest.
 */

const FIXTURE = join(ROOT, 'test/fixtures/data-format-1');
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** A copy of the fixture in a temp dir. */
function formatOneDir(): string {
  const { dir, cleanup } = tempDir('pinbot-format-');
  cleanups.push(cleanup);
  const data = join(dir, 'data');
  cpSync(FIXTURE, data, { recursive: true });
  return data;
}

/** Every record of a format-1 directory, read from its files without the store (the oracle). */
function recordsOf(dir: string): Record<string, StoredRecord[]> {
  const snap = JSON.parse(readFileSync(join(dir, 'db.json'), 'utf8')) as {
    collections: Record<string, StoredRecord[]>;
  };
  const all = new Map<string, Map<string, StoredRecord>>();
  for (const [name, records] of Object.entries(snap.collections)) all.set(name, new Map(records.map((r) => [r.id, r])));
  for (const line of readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    for (const [name, id, record] of (JSON.parse(line) as { c: Array<[string, string, StoredRecord | null]> }).c) {
      if (!all.has(name)) all.set(name, new Map());
      if (record === null) all.get(name)!.delete(id);
      else all.get(name)!.set(id, record);
    }
  }
  const sortById = (a: StoredRecord, b: StoredRecord) => a.id.localeCompare(b.id);
  return Object.fromEntries(
    [...all].filter(([, m]) => m.size > 0).map(([name, m]) => [name, [...m.values()].sort(sortById)]),
  );
}

function dumpOf(store: FileStore): Record<string, StoredRecord[]> {
  return Object.fromEntries(
    Object.entries(store.dump())
      .filter(([, records]) => records.length > 0)
      .map(([name, records]) => [name, [...records].sort((a, b) => a.id.localeCompare(b.id))]),
  );
}

const open = (dir: string, warnings: string[] = []) =>
  FileStore.open(dir, {
    integrity: dataDirIntegrity,
    warn: (m) => warnings.push(m),
    now: () => Date.parse('2026-11-26T04:00:00Z'),
  });

describe('data directory formats', () => {
  it('a directory written by the previous format opens with every record, after a whole copy is kept', async () => {
    const dir = formatOneDir();
    const expected = recordsOf(FIXTURE);
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining([
        'users',
        'api_keys',
        'wallet_accounts',
        'wallet_transactions',
        'messages',
        'conversations',
      ]),
    );
    const warnings: string[] = [];
    const store = await open(dir, warnings);
    expect(dumpOf(store)).toEqual(expected);
    const users = store.dump().users!.map((u) => (u as StoredRecord & { display_name: string }).display_name);
    expect(users.sort()).toEqual(['Alice', 'Bob']);
    expect(
      store
        .dump()
        .messages!.map((m) => (m as StoredRecord & { content: string }).content)
        .sort(),
    ).toEqual(['hello from format 1', 'hi Alice']);
    await store.close();

    const backup = join(dir, 'backup-format-1-20261126T040000000Z');
    expect(warnings).toEqual([
      `upgraded the data directory ${dir} from format 1 to ${DATA_FORMAT}; a copy as it was is kept in ${backup}`,
    ]);
    // the copy is the directory byte for byte as the previous pinbot left it
    expect(readdirSync(backup).sort()).toEqual(['db.json', 'journal.jsonl']);
    for (const f of ['db.json', 'journal.jsonl'])
      expect(readFileSync(join(backup, f), 'utf8'), f).toBe(readFileSync(join(FIXTURE, f), 'utf8'));
    // the directory now records its format, in the file and in the snapshot
    expect(JSON.parse(readFileSync(join(dir, 'format'), 'utf8'))).toEqual({ format: DATA_FORMAT });
    expect(JSON.parse(readFileSync(join(dir, 'db.json'), 'utf8')).schema_version).toBe(DATA_FORMAT);

    // opened again: the same records, no second copy, no warning
    const again: string[] = [];
    const reopened = await open(dir, again);
    expect(dumpOf(reopened)).toEqual(expected);
    await reopened.close();
    expect(again).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.startsWith('backup-'))).toEqual(['backup-format-1-20261126T040000000Z']);
  });

  it('a new directory records its format at once, before any snapshot', async () => {
    const { dir, cleanup } = tempDir('pinbot-format-');
    cleanups.push(cleanup);
    const store = await open(join(dir, 'data'));
    expect(JSON.parse(readFileSync(join(dir, 'data', 'format'), 'utf8'))).toEqual({ format: DATA_FORMAT });
    await store.close();
  });

  it('a newer format is refused in one line, and nothing is changed', async () => {
    const dir = formatOneDir();
    writeFileSync(join(dir, 'format'), '{"format":3}\n');
    const before = readdirSync(dir).sort();
    const err = (await open(dir).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(DataFormatError);
    expect(err.message).toBe(
      `${dir} holds data format 3, written by a newer pinbot; this one reads formats ` +
        `up to ${DATA_FORMAT}. Install the newer pinbot again (npm install ` +
        `pinbot@latest), or start this one on a backup taken before the upgrade ` +
        `(data/backup-format-${DATA_FORMAT}-*)`,
    );
    expect(readdirSync(dir).sort()).toEqual(before);
    for (const f of ['db.json', 'journal.jsonl'])
      expect(readFileSync(join(dir, f), 'utf8')).toBe(readFileSync(join(FIXTURE, f), 'utf8'));

    // the CLI prints it as one line and exits 1
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/pinbot.js'), 'users', 'list', '--data', dir], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 1, stderr: `pinbot: ${err.message}\n` });
  });

  it('a snapshot of a newer format (a directory whose format file was lost) is refused too', async () => {
    const dir = formatOneDir();
    const text = readFileSync(join(dir, 'db.json'), 'utf8');
    writeFileSync(join(dir, 'db.json'), text.replace('{"schema_version":1,', '{"schema_version":9,'));
    await expect(open(dir)).rejects.toThrow(`${join(dir, 'db.json')} holds data format 9, written by a newer pinbot`);
    // the copy made for the upgrade that did not happen is not left behind
    expect(readdirSync(dir).filter((n) => n.includes('backup'))).toEqual([]);
  });

  it('an upgrade refused by a damaged journal keeps no copy and changes no file but the damaged-copy', async () => {
    const dir = formatOneDir();
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n');
    lines[1] = lines[1]!.replace('hello from format 1', 'hello from format X');
    writeFileSync(join(dir, 'journal.jsonl'), lines.join('\n'));
    await expect(open(dir)).rejects.toThrow(StoreDamagedError);
    expect(existsSync(join(dir, 'format'))).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes('backup'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'db.json'), 'utf8')).schema_version).toBe(1);
  });

  it('a format file that is not one is refused, naming it', async () => {
    const dir = formatOneDir();
    appendFileSync(join(dir, 'format'), 'two');
    await expect(open(dir)).rejects.toThrow(
      new RegExp(`^${join(dir, 'format').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a data format record`),
    );
  });
});
