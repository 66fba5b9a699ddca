import {
  appendFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore, type FileStoreOptions } from '../../src/store/file/file-store.js';
import { StoreDamagedError } from '../../src/store/core/errors.js';
import { encodeEntry, type JournalEntry } from '../../src/store/file/journal-line.js';
import { tempDir } from '../helpers/api.js';
import { Counters, Items } from '../helpers/store-fixtures.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const t = tempDir('pinbot-integrity-');
  cleanups.push(t.cleanup);
  return t.dir;
}

const checks: FileStoreOptions = { integrity: { collections: ['items', 'counters'] }, warn: () => undefined };

async function open(d: string, opts: FileStoreOptions = checks): Promise<FileStore> {
  const store = await FileStore.open(d, opts);
  cleanups.push(() => store.close());
  return store;
}

async function addItems(store: FileStore, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await store.transaction((tx) => {
      tx.col(Items).insert({ id: `item_${String(i).padStart(8, '0')}`, n: i });
      tx.col(Counters).put({ id: 'count', value: (tx.col(Counters).get('count')?.value ?? 0) + 1 });
    });
  }
}

/** A live store with `n` transactions in its journal, and a crash image of its directory. */
async function crashedWith(n: number, opts: FileStoreOptions = checks): Promise<string> {
  const live = await open(dir(), opts);
  await addItems(live, 0, n);
  const image = dir();
  cpSync(live.dir, image, { recursive: true });
  return image;
}

const journalOf = (d: string) => join(d, 'journal.jsonl');
const lines = (d: string) => readFileSync(journalOf(d), 'utf8').split('\n').filter(Boolean);
const writeLines = (d: string, ls: string[]) => writeFileSync(journalOf(d), ls.map((l) => l + '\n').join(''));
/** Line `i` (0-based) changed by `fn`, with a checksum that matches the new content (a careful forger). */
function forge(d: string, i: number, fn: (e: JournalEntry) => void): void {
  const ls = lines(d);
  const e = JSON.parse(ls[i]!) as JournalEntry;
  fn(e);
  ls[i] = encodeEntry(e.s, e.c).trimEnd();
  writeLines(d, ls);
}

async function refusal(d: string, opts: FileStoreOptions = checks): Promise<StoreDamagedError> {
  const err = await FileStore.open(d, opts).then(
    (s) => (cleanups.push(() => s.close()), new Error('it opened')),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreDamagedError);
  expect(existsSync(join(d, 'pinbot.lock'))).toBe(false);
  return err as StoreDamagedError;
}

const copies = (d: string) => readdirSync(d).filter((f) => f.startsWith('journal.jsonl.damaged-'));

describe('journal integrity (issue 13, item 4)', () => {
  it('writes a checksum on every line, and still plain JSON', async () => {
    const d = await crashedWith(3);
    for (const l of lines(d))
      expect(JSON.parse(l)).toMatchObject({ k: expect.stringMatching(/^[0-9a-f]{8}$/), s: expect.any(Number) });
  });

  it(
    'refuses a line changed after it was written (still valid JSON), naming file:line, ' +
      'keeping a copy of the journal',
    async () => {
      const d = await crashedWith(5);
      const ls = lines(d);
      ls[2] = ls[2]!.replace('"n":2', '"n":2000');
      writeLines(d, ls);
      const before = readFileSync(journalOf(d));
      const err = await refusal(d);
      expect(err.message).toContain(`${journalOf(d)}:3: the checksum does not match the line`);
      expect(err.message).toContain('Start-up refused (the journal is kept as');
      expect(copies(d)).toHaveLength(1);
      expect(readFileSync(join(d, copies(d)[0]!))).toEqual(before);
      expect(readFileSync(journalOf(d))).toEqual(before); // nothing cut
      // A restart loop on the same damage does not pile up copies.
      await refusal(d);
      expect(copies(d)).toHaveLength(1);
    },
  );

  it('refuses a changed last line too, instead of dropping it as a torn write', async () => {
    const d = await crashedWith(4);
    const ls = lines(d);
    ls[3] = ls[3]!.replace('"value":4', '"value":40');
    writeLines(d, ls);
    expect((await refusal(d)).message).toContain(`${journalOf(d)}:4: the checksum does not match`);
  });

  it('refuses a line without a checksum', async () => {
    const d = await crashedWith(3);
    const ls = lines(d);
    const e = JSON.parse(ls[1]!) as { s: number; c: unknown };
    ls[1] = JSON.stringify({ s: e.s, c: e.c });
    writeLines(d, ls);
    expect((await refusal(d)).message).toContain(`${journalOf(d)}:2: the line has no checksum`);
  });

  it('refuses a deleted line (the sequence numbers jump)', async () => {
    const d = await crashedWith(5);
    writeLines(
      d,
      lines(d).filter((_, i) => i !== 2),
    );
    expect((await refusal(d)).message).toContain(
      `${journalOf(d)}:3: transaction 4 follows transaction 2 (a line was deleted, repeated or moved)`,
    );
  });

  it('refuses a repeated line', async () => {
    const d = await crashedWith(3);
    const ls = lines(d);
    writeLines(d, [...ls, ls[2]!]);
    expect((await refusal(d)).message).toContain(`${journalOf(d)}:4: transaction 3 follows transaction 3`);
  });

  it.each([
    [
      'a phantom collection',
      (e: JournalEntry) => e.c.push(['phantom', 'x_1', { id: 'x_1' }]),
      'unknown collection "phantom"',
    ],
    [
      'a change that is not a triple',
      (e: JournalEntry) => (e.c[0] = ['items'] as never),
      'a change is not [collection, id, record]',
    ],
    [
      'a record under another id',
      (e: JournalEntry) => (e.c[0]![2] = { id: 'item_other' }),
      'the record\'s id is "item_other"',
    ],
    [
      'a record that is not an object',
      (e: JournalEntry) => (e.c[0]![2] = 'boo' as never),
      'the record is not an object',
    ],
  ])('refuses %s, even with a matching checksum', async (_, change, message) => {
    const d = await crashedWith(3);
    forge(d, 1, change);
    const err = await refusal(d);
    expect(err.message).toContain(`${journalOf(d)}:2: `);
    expect(err.message).toContain(message);
  });

  it('checks collections only against the list it is given (and the collections this process declares)', async () => {
    const d = await crashedWith(2, { warn: () => undefined });
    forge(d, 1, (e) => e.c.push(['phantom', 'x_1', { id: 'x_1' }]));
    const store = await open(d, { warn: () => undefined });
    expect(store.seq).toBe(2);
  });
});

describe('snapshot and journal must follow each other (issue 13, items 3 and 13)', () => {
  /** A store compacted after `a` transactions, with `b` more in its journal, as a crash leaves it. */
  async function compactedThen(a: number, b: number): Promise<{ image: string; live: FileStore }> {
    const live = await open(dir());
    await addItems(live, 0, a);
    await live.compact();
    await addItems(live, a, b);
    const image = dir();
    cpSync(live.dir, image, { recursive: true });
    return { image, live };
  }

  it('refuses to start when db.json is missing and the journal does not start at 1', async () => {
    const { image } = await compactedThen(4, 3);
    rmSync(join(image, 'db.json'));
    const err = await refusal(image);
    expect(err.message).toContain(
      `${journalOf(image)}:1: db.json is missing, but the journal starts at transaction 5, not 1`,
    );
    expect(err.message).toMatch(/Put db.json back \(from a backup\)/);
  });

  it('starts without db.json when the journal holds everything from transaction 1', async () => {
    const d = await crashedWith(3);
    expect(existsSync(join(d, 'db.json'))).toBe(false);
    expect((await open(d)).read.col(Items).count()).toBe(3);
  });

  it('refuses an older db.json (transactions between it and the journal are missing)', async () => {
    const live = await open(dir());
    await addItems(live, 0, 2);
    await live.compact();
    const old = readFileSync(join(live.dir, 'db.json'));
    await addItems(live, 2, 3);
    await live.compact();
    await addItems(live, 5, 2);
    const image = dir();
    cpSync(live.dir, image, { recursive: true });
    writeFileSync(join(image, 'db.json'), old);
    const err = await refusal(image);
    expect(err.message).toContain(
      `${journalOf(image)}:1: the journal starts at transaction 6, but db.json ends at 2: transactions 3–5 are missing`,
    );
  });

  it('refuses a db.json ahead of the journal instead of skipping the journal silently', async () => {
    const { image } = await compactedThen(3, 4);
    const db = readFileSync(join(image, 'db.json'), 'utf8');
    writeFileSync(join(image, 'db.json'), db.replace('"seq":3,', '"seq":999,'));
    const err = await refusal(image);
    expect(err.message).toContain(
      `${journalOf(image)}:1: db.json (transaction 999) is ahead of the journal (transaction 4)`,
    );
  });

  it('the journal after a compaction starts exactly after the snapshot, writes in flight included', async () => {
    const store = await open(dir());
    await addItems(store, 0, 3);
    const during = [store.compact(), addItems(store, 3, 5)];
    await Promise.all(during);
    const snapSeq = JSON.parse(readFileSync(join(store.dir, 'db.json'), 'utf8')).seq as number;
    const first = JSON.parse(lines(store.dir)[0] ?? '{"s":0}').s as number;
    expect(first === 0 || first === snapSeq + 1).toBe(true);
    const image = dir();
    cpSync(store.dir, image, { recursive: true });
    expect((await open(image)).read.col(Counters).get('count')?.value).toBe(8);
  });

  it(
    'a compaction whose snapshot failed leaves journal.old.jsonl; the next one moves ' +
      'the journal to journal.old.2.jsonl, never copying',
    async () => {
      let fail = true;
      let atRotation: string[] = [];
      const d = dir();
      const journals = () =>
        readdirSync(d)
          .filter((f) => f.startsWith('journal.'))
          .sort();
      const compaction = (step: string) => {
        if (step !== 'rotated') return;
        if (fail) throw new Error('disk full');
        atRotation = journals();
      };
      const store = await open(d, { ...checks, hooks: { compaction } });
      await addItems(store, 0, 3);
      await expect(store.compact()).rejects.toThrow('disk full');
      await addItems(store, 3, 2);
      const crashed = dir();
      cpSync(store.dir, crashed, { recursive: true });
      expect(readdirSync(crashed).filter((f) => f.startsWith('journal.'))).toEqual([
        'journal.jsonl',
        'journal.old.jsonl',
      ]);
      expect((await open(crashed)).read.col(Items).count()).toBe(5); // replayed, then compacted at open
      fail = false;
      await store.compact();
      expect(atRotation).toEqual(['journal.jsonl', 'journal.old.2.jsonl', 'journal.old.jsonl']);
      expect(journals()).toEqual(['journal.jsonl']);
    },
  );
});

describe('a torn tail is cut, its bytes kept (issue 13, item 13)', () => {
  it('copies the cut bytes to journal.jsonl.damaged-<time> before truncating', async () => {
    const d = await crashedWith(3);
    const good = statSync(journalOf(d)).size;
    const torn = '{"k":"00000000","s":4,"c":[["items","item_t';
    appendFileSync(journalOf(d), torn);
    const warnings: string[] = [];
    const store = await open(d, { ...checks, warn: (m) => warnings.push(m) });
    expect(store.read.col(Items).count()).toBe(3);
    expect(statSync(journalOf(d)).size).toBe(good);
    expect(copies(d)).toHaveLength(1);
    expect(copies(d)[0]).toMatch(/^journal\.jsonl\.damaged-\d{8}T\d{9}Z$/);
    expect(readFileSync(join(d, copies(d)[0]!), 'utf8')).toBe(torn);
    expect(warnings[0]).toContain(`its bytes are kept in ${join(d, copies(d)[0]!)}`);
  });
});

describe('only the last line can be torn (issue 21 item 10)', () => {
  // A damaged acknowledged line followed by a torn last line was dropped with it as a "torn
  // tail": the server started without acknowledged writes (pending transfers 5 → 3).
  it(
    'an unreadable line followed by a torn last line stops start-up at the damaged ' + 'line, cutting nothing',
    async () => {
      const d = await crashedWith(5);
      const ls = lines(d);
      ls[4] = ls[4]!.slice(0, 40); // the last acknowledged line, cut short in place (bit rot, a bad sector)
      writeLines(d, ls);
      appendFileSync(journalOf(d), '{"k":"00000000","s":6,"c":[["items","item_t'); // then a crash mid-append
      const before = readFileSync(journalOf(d));
      const err = await refusal(d);
      expect(err.message).toContain(
        `${journalOf(d)}:5: unreadable line, and it is not the last line (a torn line ` +
          `6 follows it), so it is not a write cut short by a crash`,
      );
      expect(err.message).toContain('Restore the data directory from a backup');
      expect(readFileSync(journalOf(d))).toEqual(before); // nothing cut
    },
  );

  it('two unreadable lines at the end: the first is damage, not a torn tail', async () => {
    const d = await crashedWith(4);
    const ls = lines(d);
    ls[2] = '\0\0\0\0\0\0';
    ls[3] = ls[3]!.slice(0, 20);
    writeLines(d, ls);
    expect((await refusal(d)).message).toContain(
      `${journalOf(d)}:3: unreadable line, and it is not the last line (line 4 follows it)`,
    );
  });

  it('an unreadable last line, alone, is still a torn tail: cut, the rest kept', async () => {
    const d = await crashedWith(4);
    const ls = lines(d);
    ls[3] = ls[3]!.slice(0, 20);
    writeLines(d, ls);
    const warnings: string[] = [];
    const store = await open(d, { ...checks, warn: (m) => warnings.push(m) });
    expect(store.read.col(Items).count()).toBe(3);
    expect(warnings[0]).toMatch(/journal\.jsonl:4: dropped a torn tail/);
  });
});

describe('the collections a data directory may hold', () => {
  it(
    'COLLECTIONS lists every collection declared in src/ (a missing one would be ' + 'refused at the next start)',
    async () => {
      const { COLLECTIONS } = await import('../../src/deployment/store-integrity.js');
      const declared = new Set<string>();
      const walk = (d: string) => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const p = join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (p.endsWith('.ts'))
            for (const m of readFileSync(p, 'utf8').matchAll(/defineCollection(?:<[^>]*>)?\(\{\s*name:\s*'([^']+)'/g))
              declared.add(m[1]!);
        }
      };
      walk(join(import.meta.dirname, '../../src'));
      expect(declared.size).toBeGreaterThan(10);
      expect([...COLLECTIONS].sort()).toEqual([...declared].sort());
    },
  );
});
