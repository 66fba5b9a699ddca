import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DATA_DIR, DOCUMENTED_ENTRIES } from '../../src/util/data-dir.js';

/** The names in the first column of docs/operations.md's "The data directory" table. */
function documented(): string[] {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.split('## The data directory')[1]!.split('\n## ')[0]!;
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

describe('the data-directory layout (src/util/data-dir.ts)', () => {
  it('lists every entry of the layout in docs/operations.md, and nothing the layout does not name', () => {
    const names = documented();
    expect(names.length).toBeGreaterThan(5);
    for (const e of DOCUMENTED_ENTRIES)
      expect(names, `docs/operations.md "The data directory" lacks ${e}`).toContain(e);
    // the other way: a row the code no longer makes is stale
    for (const n of names)
      if (!n.endsWith('…'))
        expect(DOCUMENTED_ENTRIES, `docs/operations.md lists ${n}, which src/util/data-dir.ts does not name`).toContain(
          n,
        );
  });

  it('every name of DATA_DIR is among the documented entries', () => {
    for (const [key, name] of Object.entries(DATA_DIR)) {
      expect(
        DOCUMENTED_ENTRIES.some((e) => e === name || e.startsWith(name) || e.includes(name)),
        `DATA_DIR.${key} (${name}) is not documented`,
      ).toBe(true);
    }
  });
});
