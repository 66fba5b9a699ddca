import { afterAll, describe, expect, it } from 'vitest';
import { observeCommits, type CommittedWrite } from '../../src/store/core/commit-signal.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { defineCollection } from '../../src/store/core/types.js';
import { testDatabase } from '../helpers/pg-db.js';
import { eventually } from '../helpers/serve-child.js';

/** On PostgreSQL, the bots of one process are woken by the commits of the others too. */

interface Note {
  id: string;
  text: string;
}
const Notes = defineCollection<Note>({ name: 'feed_notes' });

describe('commit feed on PostgreSQL', () => {
  const open: PgStore[] = [];
  afterAll(async () => {
    for (const s of open) await s.close().catch(() => undefined);
  });

  it('on PostgreSQL, the commits of another process are reported once applied here', { timeout: 60_000 }, async () => {
    const url = await testDatabase();
    const mine = await PgStore.open({ url, warn: () => undefined });
    const other = await PgStore.open({ url, warn: () => undefined });
    open.push(mine, other);
    const { store, commits } = observeCommits(mine);
    const heard: CommittedWrite[] = [];
    commits.subscribe((writes) => heard.push(...writes));
    await other.transaction((tx) => tx.col(Notes).insert({ id: 'n9', text: 'from elsewhere' }));
    const w = await eventually(() => heard.find((x) => x.id === 'n9'), 20_000, 'the other process commit');
    expect(w).toMatchObject({ collection: 'feed_notes', after: { text: 'from elsewhere' } });
  });

  it('commits of others applied by a commit of this process (the head had moved) are reported too', {
    timeout: 60_000,
  }, async () => {
    const url = await testDatabase();
    const mine = await PgStore.open({ url, warn: () => undefined });
    const other = await PgStore.open({ url, warn: () => undefined });
    open.push(mine, other);
    // no notifications here: only this process's own commit can bring the other's in
    await (mine as unknown as { listener: { stop(): Promise<void> } }).listener.stop();
    const { store, commits } = observeCommits(mine);
    const heard: string[] = [];
    commits.subscribe((writes) => heard.push(...writes.map((w) => w.id)));
    await other.transaction((tx) => tx.col(Notes).insert({ id: 'o1', text: 'from elsewhere' }));
    await store.transaction((tx) => tx.col(Notes).insert({ id: 'm1', text: 'here' }));
    expect(mine.read.col(Notes).get('o1')).toBeDefined();
    // each heard once: the other's commit, and this one's (its function ran twice)
    expect(heard.sort()).toEqual(['m1', 'o1']);
  });
});
