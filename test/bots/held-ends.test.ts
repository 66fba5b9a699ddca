import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BotEvent } from '../../src/runtime/contract/types.js';
import { BotInbox, BotState, DailyCapError } from '../../src/runtime/state/bot-state.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { tempDir } from '../helpers/api.js';

// The end of an event's last run (the removal of its inbox entry, nothing else to write) goes
// with the bot's next write on an ordered store (BotState.endLater): one transaction fewer an
// event. The crash side is test/bots/exactly-once.test.ts (`after-run`: killed while it is held).

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(): Promise<{ store: FileStore; dir: string }> {
  const tmp = tempDir('pinbot-held-ends-');
  cleanups.push(tmp.cleanup);
  const store = await FileStore.open(tmp.dir);
  cleanups.push(() => store.close());
  return { store, dir: tmp.dir };
}

const event = (n: number): BotEvent => ({
  key: `message.received:msg_${n}`,
  type: 'message.received',
  payload: { id: `msg_${n}`, content: `m${n}` },
  at: n,
});

/** The change sets of the journal's lines, as `collection id` (a removal ends with ` -`). */
function journal(dir: string): string[][] {
  return readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) =>
      (JSON.parse(l) as { c: Array<[string, string, unknown]> }).c.map(([c, id, r]) => `${c} ${id}${r ? '' : ' -'}`),
    );
}

const started = (entry: string) => ({
  entry,
  rule: 'echo',
  progress: { steps: [{ status: 'started' as const, args: 'hi' }] },
});

describe('the end of a run held for the bot next write (an ordered store)', () => {
  it('goes in the same transaction as the next write; readers through BotState miss the entry at once', async () => {
    const { store, dir } = await open();
    const state = new BotState(store, 'echo', true);
    const [a, b] = await state.commit({}, [event(1), event(2)]);
    await state.write(started(a!.id), { until: 'commit' });
    const before = journal(dir).length;
    await state.endLater(a!.id);
    // held: the store still has it, the bot's readers do not
    expect(store.read.col(BotInbox).get(a!.id)).toBeDefined();
    expect(state.entry(a!.id)).toBeUndefined();
    expect(state.inbox().map((e) => e.id)).toEqual([b!.id]);
    await state.write(started(b!.id), { until: 'commit' });
    await state.durable();
    expect(store.read.col(BotInbox).get(a!.id)).toBeUndefined();
    // one line: the removal first, then the next write-ahead
    expect(journal(dir).slice(before)).toEqual([[`bot_inbox ${a!.id} -`, `bot_inbox ${b!.id}`]]);
  });

  it('with no write after it, goes alone once the turn of the event loop is done', async () => {
    const { store, dir } = await open();
    const state = new BotState(store, 'echo', true);
    const [a] = await state.commit({}, [event(1)]);
    const before = journal(dir).length;
    await state.endLater(a!.id);
    await new Promise((resolve) => setImmediate(resolve));
    await store.durable();
    expect(store.read.col(BotInbox).get(a!.id)).toBeUndefined();
    expect(journal(dir).slice(before)).toEqual([[`bot_inbox ${a!.id} -`]]);
  });

  it('a write that is refused leaves it held; the next write takes it', async () => {
    const { store, dir } = await open();
    const state = new BotState(store, 'echo', true);
    const [a, b] = await state.commit({}, [event(1), event(2)]);
    await state.endLater(a!.id);
    // over the daily cap: the write throws, its transaction is undone, the end with it
    const over = { ...started(b!.id), spend: { date: '2026-01-01', cents: 500, max: 100 } };
    await expect(state.write(over, { until: 'commit' })).rejects.toBeInstanceOf(DailyCapError);
    expect(store.read.col(BotInbox).get(a!.id)).toBeDefined();
    expect(state.entry(a!.id)).toBeUndefined();
    const before = journal(dir).length;
    await state.write(started(b!.id), { until: 'commit' });
    await state.durable();
    expect(journal(dir).slice(before)).toEqual([[`bot_inbox ${a!.id} -`, `bot_inbox ${b!.id}`]]);
  });

  it('a poll that queues events takes it too; durable() writes what is held', async () => {
    const { store } = await open();
    const state = new BotState(store, 'echo', true);
    const [a] = await state.commit({}, [event(1)]);
    await state.endLater(a!.id);
    await state.commit({ messages: { after: 'x' } }, [event(2)]);
    expect(store.read.col(BotInbox).get(a!.id)).toBeUndefined();
    const [c] = state.inbox();
    await state.endLater(c!.id);
    await state.durable();
    expect(store.read.col(BotInbox).get(c!.id)).toBeUndefined();
  });

  it('a store not ordered with the requests (PostgreSQL, a remote bot): removed at once', async () => {
    const { store } = await open();
    const state = new BotState(store, 'echo', false);
    const [a] = await state.commit({}, [event(1)]);
    await state.endLater(a!.id);
    expect(store.read.col(BotInbox).get(a!.id)).toBeUndefined();
  });
});
