import type { Store, Tx } from '../../store/core/types.js';
import { onceCommitted } from '../../util/commit-ack.js';
import {
  BotMemories,
  BotMetas,
  BotCursors,
  BotInbox,
  BotDialogs,
  PluginStates,
  type BotMeta,
  type RunProgress,
  type InboxEntry,
} from './bot-records.js';
import type { BotEvent } from '../contract/types.js';
import { compactJson, type CompactSeed } from './compact.js';
import { copyPlain } from './copy.js';

// the records keep their old import path: most of the runtime reads them with BotState
export {
  BotMetas,
  BotCursors,
  BotInbox,
  BotDialogs,
  dialogId,
  PluginStates,
  type DialogRecord,
  type AskProgress,
  type PluginAsk,
  type ReplayEntry,
  type BotMeta,
  type BotCursor,
  type StepErrorKind,
  type StepProgress,
  type RunProgress,
  type InboxEntry,
  type PluginStateRecord,
} from './bot-records.js';

const pad = (n: number) => String(n).padStart(12, '0');

/** Changes made in one write of a run (see BotState.write). */
export interface RunWrite {
  entry: string;
  rule: string;
  progress: RunProgress;
  vars?: Record<string, unknown>;
  spend?: { date: string; cents: number; max?: number };
  /** A run started: the cooldown's key and time, and entries of that rule older than `expired` are dropped. */
  lastRun?: { key: string; at: number; expired: number };
  /** A run started under a throttle: its key, time, and window. */
  throttled?: { key: string; at: number; withinMs: number };
  /** Removes the inbox entry (every run of it has finished). */
  finish?: boolean;
  /**
   * The entry is kept compact (see compacted), sharing what `seed` holds (and adding its own
   * parts to it): a run about to wait for an answer, whose entry stays in memory as long as the
   * dialog waits.
   */
  compact?: CompactSeed;
}

/**
 * What the entry keeps of a run: all of it while it goes on; once done, only that (a finished
 * run is never read again but for `done`, and its entry may stay while another run waits).
 */
const keptOf = (p: RunProgress): RunProgress => (p.done ? { steps: [], done: true } : copyPlain(p));

/**
 * An inbox entry rebuilt from its JSON (see compactJson), its done runs kept short (keptOf):
 * a waiting dialog's entry stays in memory as long as the person thinks (bench `dialogs`).
 */
function compacted(entry: InboxEntry, seed: CompactSeed): InboxEntry {
  const runs = Object.fromEntries(Object.entries(entry.runs).map(([r, p]) => [r, p.done ? keptOf(p) : p]));
  return compactJson({ ...entry, runs }, seed);
}

/** A variable whose value the bot file changed: what the bot had, what the file says now. */
export interface VarChange {
  key: string;
  from: unknown;
  to: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The variables a start takes from the file: the keys whose value in the file differs from the
 * file's value at the last start (`before`) — an edited `vars: { cap: 3 }` wins over the 10 the
 * bot had — when the bot has a different value. A key the file did not change keeps what a
 * `set:` wrote; a key new to the state is simply set; a key removed from the file stays (reset
 * it with `pinbot bots vars NAME --reset`). Without `before` (state of an older version) the
 * stored values stay. Internal.
 *
 * @example fileVarsChanges({ cap: 10, tips: 4 }, { cap: 10 }, { cap: 3 }) // [{ key: 'cap', from: 10, to: 3 }]
 */
export function fileVarsChanges(
  vars: Record<string, unknown>,
  before: Record<string, unknown> | undefined,
  file: Record<string, unknown>,
): VarChange[] {
  if (!before) return [];
  const edited = (k: string, v: unknown) => !Object.hasOwn(before, k) || !same(before[k], v);
  return Object.entries(file)
    .filter(([k, v]) => edited(k, v) && Object.hasOwn(vars, k) && !same(vars[k], v))
    .map(([key, to]) => ({ key, from: vars[key], to }));
}

/** `vars.cap: 10 → 3 from the file` for each change, joined. */
export function describeVarChanges(changed: readonly VarChange[]): string {
  return changed
    .map((c) => `vars.${c.key}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)} from the file`)
    .join('; ');
}

/** Thrown inside a write when the daily cap would be passed; nothing is written. */
export class DailyCapError extends Error {}

/**
 * The persistent state of one bot in a Store (the server's store for embedded bots, a store of
 * its own under data/ for remote ones, a memory copy for dry runs). Every method that changes
 * something is one store transaction, durable when it resolves.
 */
export class BotState {
  /**
   * @param ordered The store is the one the bot's requests commit to, in one journal made durable
   *   in commit order (an embedded bot on the file store): a write made before a request is
   *   durable once the request's answer is, so such a write need not wait for its own fsync
   *   (`write(w, { await: 'commit' })`).
   */
  constructor(
    readonly store: Store,
    readonly bot: string,
    readonly ordered = false,
  ) {}

  /**
   * Entries whose removal is held for the bot's next write (see endLater), oldest first.
   * Internal.
   */
  private ends: string[] = [];

  /**
   * Removes a finished entry — the end of its last run, with nothing else to write — together
   * with the bot's next write instead of in a transaction of its own (one transaction fewer an
   * event): every write of this BotState applies it first, in the same transaction; with no
   * write by then it goes alone once the work of this turn of the event loop is done
   * (`setImmediate`), or at `settle()` / `durable()`. Readers through this BotState (`entry`,
   * `inbox`) no longer see the entry at once. Only on an `ordered` store (writes otherwise as
   * `finish`): a crash before it is written loses it with what came after it, and the run is
   * resumed at the next start — its steps are done or written ahead with their Idempotency-Key,
   * so the server replays their answers and nothing is done twice (docs/bots.md "Exactly once").
   */
  endLater(entryId: string): Promise<void> {
    if (!this.ordered) return this.finish(entryId);
    this.ends.push(entryId);
    if (!this.settleQueued) {
      this.settleQueued = true;
      setImmediate(() => {
        this.settleQueued = false;
        void this.settle().catch(() => undefined);
      });
    }
    return Promise.resolve();
  }

  /** A `settle` is queued for the next turn of the event loop (one at a time). Internal. */
  private settleQueued = false;

  /** Writes the held ends (see endLater) now; resolves once committed. */
  settle(): Promise<void> {
    if (this.ends.length === 0) return Promise.resolve();
    return onceCommitted(
      (fn) => this.store.transaction(fn),
      (tx: Tx) => this.withEnds(tx, () => undefined),
    );
  }

  /** Resolves once every write so far — the held ends too — is durable. */
  async durable(): Promise<void> {
    await this.settle();
    await this.store.durable();
  }

  /**
   * Runs `fn` in `tx` after the held ends (see endLater): they are written with it, or — when
   * `fn` throws and the transaction is undone — held again. Internal.
   */
  private withEnds<R>(tx: Tx, fn: (tx: Tx) => R): R {
    const ends = this.ends;
    if (ends.length === 0) return fn(tx);
    this.ends = [];
    try {
      const inbox = tx.col(BotInbox);
      for (const id of ends) inbox.delete(id);
      return fn(tx);
    } catch (err) {
      this.ends = [...ends, ...this.ends];
      throw err;
    }
  }

  meta(): BotMeta {
    return (
      this.store.read.col(BotMetas).get(this.bot) ?? {
        id: this.bot,
        vars: {},
        seq: 0,
        boots: 0,
        spend: { date: '', cents: 0 },
        last_run: {},
      }
    );
  }

  cursor(source: string): unknown {
    return this.store.read.col(BotCursors).get(`${this.bot}:${source}`)?.data;
  }

  /** Pending inbox entries, oldest first (not those whose removal is held: endLater). */
  inbox(): InboxEntry[] {
    const col = this.store.read.col(BotInbox);
    const ids = col.ids('bot', this.bot);
    return (this.ends.length ? ids.filter((id) => !this.ends.includes(id)) : ids).map((id) => col.get(id)!);
  }

  /** An inbox entry (none once its removal is held: endLater). */
  entry(id: string): InboxEntry | undefined {
    if (this.ends.length && this.ends.includes(id)) return undefined;
    return this.store.read.col(BotInbox).get(id);
  }

  /**
   * Applies the file's `vars:` (see fileVarsChanges), counts a start, and records `now` as the
   * baseline of every source in `sources` that has neither a cursor nor a baseline yet (its
   * first poll reads from there). Returns the boot number and the variables the file changed.
   */
  async boot(
    initialVars: Record<string, unknown>,
    sources: readonly string[] = [],
    now?: number,
  ): Promise<{ boots: number; changed: VarChange[] }> {
    return this.store.transaction((tx) => {
      const m = this.metaIn(tx);
      const changed = fileVarsChanges(m.vars, m.file_vars, initialVars);
      const fromFile = Object.fromEntries(changed.map((c) => [c.key, structuredClone(c.to)]));
      const vars = { ...structuredClone(initialVars), ...m.vars, ...fromFile };
      const baselines = { ...m.baselines };
      const cursors = tx.col(BotCursors);
      for (const s of sources)
        if (now !== undefined && baselines[s] === undefined && !cursors.get(`${this.bot}:${s}`)) baselines[s] = now;
      tx.col(BotMetas).put({ ...m, vars, file_vars: structuredClone(initialVars), boots: m.boots + 1, baselines });
      return { boots: m.boots + 1, changed };
    });
  }

  /** When the bot started needing `source` (its first poll reads what came after), if known. */
  baseline(source: string): number | undefined {
    return this.meta().baselines?.[source];
  }

  /**
   * Moves source cursors and queues new events in one write. Events already queued (same key)
   * are skipped. Returns the entries created.
   */
  async commit(
    cursors: Record<string, unknown>,
    events: BotEvent[],
    fired?: { rule: string; at: number },
  ): Promise<InboxEntry[]> {
    return this.store.transaction((t) => this.withEnds(t, (tx) => this.commitIn(tx, cursors, events, fired)));
  }

  /** BotState.commit inside its transaction. Internal. */
  private commitIn(
    tx: Tx,
    cursors: Record<string, unknown>,
    events: BotEvent[],
    fired?: { rule: string; at: number },
  ): InboxEntry[] {
    for (const [source, data] of Object.entries(cursors))
      tx.col(BotCursors).put({ id: `${this.bot}:${source}`, bot: this.bot, source, data });
    if (events.length === 0) return [];
    let m = this.metaIn(tx);
    // a trigger's last fire goes with its event: a crash cannot separate them
    if (fired)
      m = { ...m, schedules: { ...m.schedules, [fired.rule]: Math.max(fired.at, m.schedules?.[fired.rule] ?? 0) } };
    return this.queueIn(tx, m, events);
  }

  /**
   * Writes a run's progress with what goes with it (vars, spend, cooldown), all or nothing.
   * Resolves once it is durable — or, with `until: 'commit'` on an `ordered` store, once it is
   * committed (visible, and ahead of every later commit in the journal): what comes after it
   * (the step's request, the next write) is what waits for the fsync, one for both. A write the
   * disk then refuses is taken back with every later one, the store says so in its log, and the
   * writes after it are refused.
   */
  async write(w: RunWrite, o: { until?: 'durable' | 'commit' } = {}): Promise<void> {
    const write = (tx: Tx) => this.writeIn(tx, w);
    if (o.until === 'commit' && this.ordered) await onceCommitted((fn) => this.store.transaction(fn), write);
    else await this.store.transaction(write);
  }

  /**
   * BotState.write inside a transaction of the caller's (a dialog's write goes with it); the
   * held ends (endLater) go first.
   */
  writeIn(tx: Tx, w: RunWrite): void {
    this.withEnds(tx, (t) => this.writeOne(t, w));
  }

  /** One run's write (BotState.writeIn without the held ends). Internal. */
  private writeOne(tx: Tx, w: RunWrite): void {
    {
      const inbox = tx.col(BotInbox);
      const entry = inbox.get(w.entry);
      const m = this.metaIn(tx);
      let next = m;
      if (w.spend) {
        const spent = m.spend.date === w.spend.date ? m.spend.cents : 0;
        if (w.spend.max !== undefined && spent + w.spend.cents > w.spend.max) {
          throw new DailyCapError(
            `the daily cap of ${(w.spend.max / 100).toFixed(2)} would be passed ` +
              `(${(spent / 100).toFixed(2)} sent today)`,
          );
        }
        next = { ...next, spend: { date: w.spend.date, cents: spent + w.spend.cents } };
      }
      if (w.vars) next = { ...next, vars: { ...next.vars, ...structuredClone(w.vars) } };
      if (w.lastRun !== undefined) {
        const { key, at, expired } = w.lastRun;
        // keys per sender or conversation would grow for ever: the rule's expired ones go
        const kept = Object.entries(next.last_run).filter(
          ([k, t]) => !(k.startsWith(`${w.rule}\u0000`) && t < expired),
        );
        next = { ...next, last_run: { ...Object.fromEntries(kept), [key]: at } };
      }
      if (w.throttled !== undefined) {
        const { key, at, withinMs } = w.throttled;
        const kept = Object.entries(next.runs ?? {})
          .map(
            ([k, ts]) =>
              [k, k === w.rule || k.startsWith(`${w.rule}\u0000`) ? ts.filter((t) => t > at - withinMs) : ts] as const,
          )
          .filter(([, ts]) => ts.length);
        const runs: Record<string, number[]> = Object.fromEntries(kept);
        runs[key] = [...(runs[key] ?? []), at];
        next = { ...next, runs };
      }
      if (next !== m) tx.col(BotMetas).put(next);
      if (!entry) return; // finished by another run of the same event: the meta changes still count
      if (w.finish) inbox.delete(w.entry);
      else if (w.compact) inbox.put(compacted({ ...entry, runs: { ...entry.runs, [w.rule]: w.progress } }, w.compact));
      // the store freezes what it keeps: it gets a copy, the run keeps changing its own
      else inbox.update(w.entry, { runs: { ...entry.runs, [w.rule]: keptOf(w.progress) } });
    }
  }

  /** When the trigger of `rule` last fired (its due time), if it ever did. */
  fired(rule: string): number | undefined {
    return this.meta().schedules?.[rule];
  }

  /** Notes `at` as the last fire of `rule`'s trigger (the baseline of the first start). */
  async markFired(rule: string, at: number): Promise<void> {
    await this.store.transaction((tx) => {
      const m = this.metaIn(tx);
      tx.col(BotMetas).put({ ...m, schedules: { ...m.schedules, [rule]: at } });
    });
  }

  /** Pauses a conversation or sender (loop guard) until `until`; expired pauses are dropped. */
  async pause(key: string, until: number, now: number): Promise<void> {
    await this.store.transaction((tx) => {
      const m = this.metaIn(tx);
      const paused = Object.fromEntries(Object.entries(m.paused ?? {}).filter(([, t]) => t > now));
      tx.col(BotMetas).put({ ...m, paused: { ...paused, [key]: until } });
    });
  }

  /**
   * Queues one event pushed from outside under `source`: skipped when its key is queued or was
   * among the last `keep` keys of that source (remembered in the source's cursor, in the same
   * write). Returns the entry created, if any.
   */
  async push(source: string, event: BotEvent, keep = 1000): Promise<InboxEntry | undefined> {
    return this.store.transaction((t) => this.withEnds(t, (tx) => this.pushIn(tx, source, event, keep)));
  }

  /** BotState.push inside its transaction. Internal. */
  private pushIn(tx: Tx, source: string, event: BotEvent, keep: number): InboxEntry | undefined {
    const id = `${this.bot}:${source}`;
    const seen = ((tx.col(BotCursors).get(id)?.data as { seen?: string[] } | undefined)?.seen ?? []) as string[];
    if (seen.includes(event.key) || tx.col(BotInbox).one('key', `${this.bot}\u0000${event.key}`)) return undefined;
    const m = this.metaIn(tx);
    const seq = m.seq + 1;
    tx.col(BotCursors).put({ id, bot: this.bot, source, data: { seen: [...seen, event.key].slice(-keep) } });
    tx.col(BotMetas).put({ ...m, seq });
    return tx.col(BotInbox).insert({ id: `${this.bot}:${pad(seq)}`, bot: this.bot, key: event.key, event, runs: {} });
  }

  /** Queues events again as new inbox entries, in this order (messages a dialog did not read). */
  requeueIn(tx: Tx, events: readonly BotEvent[]): InboxEntry[] {
    if (events.length === 0) return [];
    return this.queueIn(tx, this.metaIn(tx), events);
  }

  /**
   * Adds `events` to the inbox as new entries, in this order (one already there by its key is
   * not added again), numbered on from `m`'s sequence, and writes `m` with the last number.
   * Internal.
   */
  private queueIn(tx: Tx, m: BotMeta, events: readonly BotEvent[]): InboxEntry[] {
    const inbox = tx.col(BotInbox);
    let seq = m.seq;
    const out: InboxEntry[] = [];
    for (const event of events) {
      if (inbox.one('key', `${this.bot}\u0000${event.key}`)) continue;
      seq++;
      out.push(inbox.insert({ id: `${this.bot}:${pad(seq)}`, bot: this.bot, key: event.key, event, runs: {} }));
    }
    tx.col(BotMetas).put({ ...m, seq });
    return out;
  }

  /** Removes an entry no rule needs (e.g. its rules were removed by a reload). */
  async finish(entryId: string): Promise<void> {
    await this.store.transaction((t) => this.withEnds(t, (tx) => void tx.col(BotInbox).delete(entryId)));
  }

  /** Copies this bot's records into another store (dry runs work on a copy). */
  async copyTo(target: Store): Promise<void> {
    const meta = this.store.read.col(BotMetas).get(this.bot);
    const cursors = this.store.read.col(BotCursors);
    const list = cursors.ids('bot', this.bot).map((id) => cursors.get(id)!);
    const inbox = this.inbox();
    const plugins = this.store.read.col(PluginStates);
    const pluginState = plugins.ids('bot', this.bot).map((id) => plugins.get(id)!);
    const memories = this.store.read.col(BotMemories);
    const memory = memories.ids('bot', this.bot).map((id) => memories.get(id)!);
    const dialogs = this.store.read.col(BotDialogs);
    const dialogList = dialogs.ids('bot', this.bot).map((id) => dialogs.get(id)!);
    await target.transaction((tx) => {
      for (const r of dialogList) tx.col(BotDialogs).put(r);
      if (meta) tx.col(BotMetas).put(meta);
      for (const c of list) tx.col(BotCursors).put(c);
      for (const e of inbox) tx.col(BotInbox).put(e);
      for (const r of pluginState) tx.col(PluginStates).put(r);
      for (const r of memory) tx.col(BotMemories).put(r);
    });
  }

  private metaIn(tx: Tx): BotMeta {
    return tx.col(BotMetas).get(this.bot) ?? this.meta();
  }
}
