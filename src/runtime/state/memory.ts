import type { ReadView, Store, Tx } from '../../store/core/types.js';
import { LimitError } from '../contract/types.js';
import { MEMORY_KEY_PATTERN, type MemoryOptions } from '../contract/memory-subjects.js';

export { DEFAULT_MEMORY, MEMORY_KEY_PATTERN, type MemoryOptions } from '../contract/memory-subjects.js';

const KEY = new RegExp(MEMORY_KEY_PATTERN);
import { BotMemories, type MemoryScope } from './bot-records.js';

// A bot's memory of people and conversations (`remember`, `forget`, `memory.KEY`,
// `ctx.memory`): one record per person (by PIN) or conversation (by id), in the bot's state
// store, so it moves with the bot (a lease, a restart) like the rest of its state. Bounded per
// subject and per bot (anyone can message a bot: what strangers write must not grow without
// bound), aged out by `memory.ttl` on the bot's clock.

/** One change of one subject's memory: keys to set (JSON values) and keys to remove (`all`: every key). */
export interface MemoryChange {
  scope: MemoryScope;
  subject: string;
  set?: Record<string, unknown>;
  forget?: readonly string[] | 'all';
}

/** Keys and bytes. Internal. */
interface Size {
  keys: number;
  bytes: number;
}

/** Whose memory, for messages: `person ABC123`, `conversation cnv_1`. Internal. */
const whose = (scope: MemoryScope, subject: string) => `${scope} ${subject}`;

/**
 * A write refused because it would pass a bound of the bot's memory; nothing was written. A
 * guardrail: the step fails with reason `limit`.
 */
export class MemoryFullError extends LimitError {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryFullError';
  }
}

/** Subjects a sweep transaction changes at most; and a write, on its way. */
const SWEEP_BATCH = 500;
const SWEEP_IN_WRITE = 20;

/** Marks of writes applied (by step), kept per record, so a step run again does not apply twice. */
const APPLIED_KEEP = 16;

const idOf = (bot: string, scope: MemoryScope | 'total', subject: string) => `${bot}:${scope}:${subject}`;

/** The size an entry counts against the bounds: its key and its value's JSON. Internal. */
const entryBytes = (key: string, value: unknown) =>
  Buffer.byteLength(key) + Buffer.byteLength(JSON.stringify(value) ?? '');

/** Checks a key a bot file or plugin names. */
export function checkMemoryKey(key: unknown): string {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new Error(
      `memory key ${JSON.stringify(key)}: a key is a name of letters, digits and _ ` +
        `(at most 64, not starting with a digit), e.g. usual_size`,
    );
  }
  return key;
}

/** A value as memory keeps it: JSON data (a copy). Internal. */
function jsonValue(key: string, value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`memory ${key}: the value is not JSON data (${(err as Error).message})`);
  }
  if (text === undefined)
    throw new Error(`memory ${key}: the value is not JSON data (${typeof value}); use forget (delete) to remove a key`);
  return JSON.parse(text);
}

/** The usage record of a bot: its totals, and a lower bound of its oldest entry's write. Internal. */
interface Usage {
  keys: number;
  bytes: number;
  oldest?: number;
}

/**
 * The memory of one bot in a store: reads see only live entries (younger than the ttl);
 * `apply` writes changes in one transaction — all or nothing, refused with MemoryFullError past a
 * bound — and, given a mark (a step's Idempotency-Key), skips a change that mark already applied.
 *
 * @example
 * const memory = new BotMemory(store, 'pizza', DEFAULT_MEMORY, () => clock.now());
 * await memory.apply([{ scope: 'person', subject: 'ABC123', set: { usual: 'large' } }]);
 * memory.read('person', 'ABC123') // { usual: 'large' }
 */
export class BotMemory {
  constructor(
    readonly store: Store,
    readonly bot: string,
    readonly options: MemoryOptions,
    private readonly now: () => number,
  ) {}

  /** The live entries of one subject (a copy): what templates see as `memory`. */
  read(scope: MemoryScope, subject: string | undefined, view: ReadView = this.store.read): Record<string, unknown> {
    if (!subject) return {};
    const r = view.col(BotMemories).get(idOf(this.bot, scope, subject));
    if (!r) return {};
    const out: Record<string, unknown> = {};
    const live = this.liveAfter();
    for (const [k, e] of Object.entries(r.entries)) if (e.at > live) out[k] = structuredClone(e.value);
    return out;
  }

  /** Every subject with live entries (operators: `pinbot bots memory`), people first, by subject. */
  list(
    scope?: MemoryScope,
  ): Array<{ scope: MemoryScope; subject: string; entries: Record<string, { value: unknown; at: number }> }> {
    const col = this.store.read.col(BotMemories);
    const live = this.liveAfter();
    const out = [];
    for (const id of col.ids('bot', this.bot)) {
      const r = col.get(id)!;
      if (r.scope === 'total' || (scope && r.scope !== scope)) continue;
      const entries = Object.fromEntries(Object.entries(r.entries).filter(([, e]) => e.at > live));
      if (Object.keys(entries).length)
        out.push({ scope: r.scope, subject: r.subject, entries: structuredClone(entries) });
    }
    return out.sort((a, b) => (a.scope === b.scope ? (a.subject < b.subject ? -1 : 1) : a.scope === 'person' ? -1 : 1));
  }

  /** Keys and bytes the bot keeps (expired entries not yet reclaimed included). */
  usage(): { keys: number; bytes: number } {
    const u = this.store.read.col(BotMemories).get(idOf(this.bot, 'total', ''));
    return { keys: u?.keys ?? 0, bytes: u?.bytes ?? 0 };
  }

  /**
   * Applies changes in one transaction. Returns what each change did; throws MemoryFullError
   * (nothing written) when a bound would be passed. With `mark`, a change already applied under
   * it (an earlier run of the same step) is not applied again.
   */
  async apply(changes: readonly MemoryChange[], mark?: string): Promise<void> {
    for (const c of changes) for (const k of Object.keys(c.set ?? {})) checkMemoryKey(k);
    const values = changes.map((c) =>
      c.set ? Object.fromEntries(Object.entries(c.set).map(([k, v]) => [k, jsonValue(k, v)])) : undefined,
    );
    await this.store.transaction((tx) => {
      const now = this.now();
      const usage = this.usageIn(tx);
      // a few expired subjects go with each write (a write's cost stays bounded); the sweep takes the rest
      if (this.expiredMayBe(usage, now)) this.sweepIn(tx, usage, now, SWEEP_IN_WRITE);
      changes.forEach((c, i) => this.applyOne(tx, usage, { ...c, set: values[i] }, now, mark));
      this.putUsage(tx, usage);
    });
  }

  /**
   * Removes expired entries (and subjects left empty) of the whole bot, in transactions of at
   * most SWEEP_BATCH subjects (the event loop is not held for a whole bot); returns how many went.
   */
  async sweep(): Promise<number> {
    if (this.options.ttlMs === undefined) return 0;
    let gone = 0;
    for (;;) {
      if (!this.expiredMayBe(this.usageIn(this.store.read), this.now())) return gone;
      const step = await this.store.transaction((tx) => {
        const usage = this.usageIn(tx);
        const r = this.sweepIn(tx, usage, this.now(), SWEEP_BATCH);
        if (r.gone || r.done) this.putUsage(tx, usage);
        return r;
      });
      gone += step.gone;
      if (step.done) return gone;
    }
  }

  /** Whether an entry may have expired (its usage's oldest write is past the ttl). Internal. */
  private expiredMayBe(usage: Usage, now: number): boolean {
    return (
      this.options.ttlMs !== undefined &&
      usage.keys > 0 &&
      usage.oldest !== undefined &&
      usage.oldest <= now - this.options.ttlMs
    );
  }

  /** Entries written at or before this are expired (-Infinity without a ttl). Internal. */
  private liveAfter(now = this.now()): number {
    return this.options.ttlMs === undefined ? -Infinity : now - this.options.ttlMs;
  }

  private usageIn(view: Pick<ReadView, 'col'> | Tx): Usage {
    const u = view.col(BotMemories).get(idOf(this.bot, 'total', ''));
    return { keys: u?.keys ?? 0, bytes: u?.bytes ?? 0, oldest: u?.oldest };
  }

  private putUsage(tx: Tx, u: Usage): void {
    const id = idOf(this.bot, 'total', '');
    if (u.keys === 0) tx.col(BotMemories).delete(id);
    else
      tx.col(BotMemories).put({
        id,
        bot: this.bot,
        scope: 'total',
        subject: '',
        entries: {},
        keys: u.keys,
        bytes: u.bytes,
        oldest: u.oldest,
      });
  }

  /**
   * Drops expired entries of the bot in `tx`, changing at most `limit` subjects; `usage` follows.
   * `done`: every subject was looked at (then `usage.oldest` is exact). Internal.
   */
  private sweepIn(tx: Tx, usage: Usage, now: number, limit: number): { gone: number; done: boolean } {
    const col = tx.col(BotMemories);
    const live = this.liveAfter(now);
    let gone = 0;
    let changed = 0;
    let oldest: number | undefined;
    for (const id of [...col.ids('bot', this.bot)]) {
      const r = col.get(id)!;
      if (r.scope === 'total') continue;
      const all = Object.entries(r.entries);
      const kept = all.filter(([, e]) => e.at > live);
      for (const [, e] of kept) oldest = Math.min(oldest ?? e.at, e.at);
      if (kept.length === all.length) continue;
      if (changed === limit) return { gone, done: false };
      changed++;
      gone += all.length - kept.length;
      const bytes = kept.reduce((n, [k, e]) => n + entryBytes(k, e.value), 0);
      usage.keys -= all.length - kept.length;
      usage.bytes -= r.bytes - bytes;
      if (kept.length) col.put({ ...r, entries: Object.fromEntries(kept), keys: kept.length, bytes });
      else col.delete(id);
    }
    usage.oldest = oldest;
    return { gone, done: true };
  }

  /** One change of one subject, bounds checked, in `tx`; `usage` follows. Internal. */
  private applyOne(tx: Tx, usage: Usage, c: MemoryChange, now: number, mark: string | undefined): void {
    const col = tx.col(BotMemories);
    const id = idOf(this.bot, c.scope, c.subject);
    const cur = col.get(id);
    if (mark && cur?.applied?.includes(mark)) return;
    const live = this.liveAfter(now);
    // expired entries of this subject go now: they count for nothing
    const entries: Record<string, { value: unknown; at: number }> = {};
    for (const [k, e] of Object.entries(cur?.entries ?? {})) if (e.at > live) entries[k] = e;
    if (c.forget === 'all') for (const k of Object.keys(entries)) delete entries[k];
    else for (const k of c.forget ?? []) delete entries[k];
    for (const [k, v] of Object.entries(c.set ?? {})) entries[k] = { value: v, at: now };
    const keys = Object.keys(entries).length;
    const bytes = Object.entries(entries).reduce((n, [k, e]) => n + entryBytes(k, e.value), 0);
    const grows = keys > (cur?.keys ?? 0) || bytes > (cur?.bytes ?? 0);
    if (grows)
      this.checkRoom(
        c,
        { keys, bytes },
        { keys: usage.keys - (cur?.keys ?? 0) + keys, bytes: usage.bytes - (cur?.bytes ?? 0) + bytes },
      );
    usage.keys += keys - (cur?.keys ?? 0);
    usage.bytes += bytes - (cur?.bytes ?? 0);
    if (c.set && Object.keys(c.set).length) usage.oldest = Math.min(usage.oldest ?? now, now);
    const applied = mark ? [...(cur?.applied ?? []), mark].slice(-APPLIED_KEEP) : cur?.applied;
    // a subject left without keys goes, marks and all: forgetting again changes nothing, and
    // empty records (a stranger's `forget`) must not pile up uncounted
    if (keys === 0) {
      if (cur) col.delete(id);
    } else
      col.put({
        id,
        bot: this.bot,
        scope: c.scope,
        subject: c.subject,
        entries,
        keys,
        bytes,
        ...(applied ? { applied } : {}),
      });
  }

  /** Refuses a write that would pass a bound (subject's, then the bot's). Internal. */
  private checkRoom(c: MemoryChange, subject: Size, bot: Size): void {
    const o = this.options;
    const mine = `the memory of ${whose(c.scope, c.subject)} for bot ${this.bot}`;
    const full = `the memory of bot ${this.bot} is full: this write would make it`;
    const aging = 'set memory.ttl so old entries age out, forget keys';
    // [passed, what, setting, what to do], in the order they are checked
    const bounds: Array<[boolean, string, string, string]> = [
      [
        subject.keys > o.maxKeysPerSubject,
        `${mine} would have ${subject.keys} keys, at most ${o.maxKeysPerSubject}`,
        'max_keys_per_person',
        'forget keys it no longer needs',
      ],
      [
        subject.bytes > o.maxBytesPerSubject,
        `${mine} would hold ${subject.bytes} bytes, at most ${o.maxBytesPerSubject}`,
        'max_bytes_per_person',
        'keep shorter values',
      ],
      [
        bot.keys > o.maxKeys,
        `${full} ${bot.keys} keys (every person and conversation), at most ${o.maxKeys}`,
        'max_keys',
        `${aging} (pinbot bots memory ${this.bot} --person PIN --forget KEY)`,
      ],
      [bot.bytes > o.maxBytes, `${full} ${bot.bytes} bytes, at most ${o.maxBytes}`, 'max_bytes', aging],
    ];
    const passed = bounds.find(([over]) => over);
    if (!passed) return;
    const [, what, setting, todo] = passed;
    const keys = Object.keys(c.set ?? {}).join(', ');
    throw new MemoryFullError(
      `remember ${keys}: ${what} (memory.${setting}); nothing was written — ${todo}, ` +
        `or raise memory.${setting} in the bot file`,
    );
  }
}
