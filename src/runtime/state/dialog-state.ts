import type { BotEvent } from '../contract/types.js';
import { BotDialogs, BotInbox, type BotState, type DialogRecord, type InboxEntry, type RunWrite } from './bot-state.js';

/** The texts of `v` (8 characters or more), each under itself. Internal. */
function textsOf(v: unknown, into: Map<string, string>): Map<string, string> {
  if (typeof v === 'string') {
    if (v.length >= 8) into.set(v, v);
  } else if (v && typeof v === 'object') for (const x of Object.values(v)) textsOf(x, into);
  return into;
}

/**
 * A dialog record rebuilt from its JSON: V8 then shares its hidden classes (see
 * RunWrite.compact), and its texts that the run's entry holds too (its id, the conversation,
 * the person) are the entry's, not copies.
 */
function compactRecord(rec: DialogRecord, entry: unknown): DialogRecord {
  const known = textsOf(entry, new Map());
  return JSON.parse(JSON.stringify(rec), (_k, v: unknown) =>
    typeof v === 'string' ? (known.get(v) ?? v) : v,
  ) as DialogRecord;
}

/** What taking the next answer of a dialog found. */
export type Taken = { answer: BotEvent } | 'parked' | 'timeout' | 'gone';

/**
 * The dialogs of one bot (records of `bot_dialogs`, see DialogRecord), each change one store
 * transaction together with the write of the run it belongs to: a dialog and its run's
 * progress never disagree after a crash, and a message is either in the inbox or in exactly
 * one dialog's queue.
 */
export class DialogState {
  constructor(private readonly state: BotState) {}

  private get store() {
    return this.state.store;
  }

  get(id: string): DialogRecord | undefined {
    return this.store.read.col(BotDialogs).get(id);
  }

  /** The bot's dialogs, oldest first. */
  list(): DialogRecord[] {
    const col = this.store.read.col(BotDialogs);
    return col
      .ids('bot', this.state.bot)
      .map((id) => col.get(id)!)
      .sort((a, b) => a.since - b.since);
  }

  /** How many dialogs the bot has (the gauge pinbot_bot_dialogs_waiting). */
  count(): number {
    return this.store.read.col(BotDialogs).ids('bot', this.state.bot).length;
  }

  /** The dialogs of one person with this bot. */
  ofPerson(pin: string): DialogRecord[] {
    const col = this.store.read.col(BotDialogs);
    return col.ids('person', `${this.state.bot}\u0000${pin}`).map((id) => col.get(id)!);
  }

  /**
   * Opens (or re-opens, after a reload changed the ask) the dialog of `rec` with its run's
   * write. Returns the record that holds that person and conversation when another run does.
   */
  async open(rec: DialogRecord, w: RunWrite): Promise<DialogRecord | undefined> {
    return this.store.transaction((tx) => {
      const col = tx.col(BotDialogs);
      const held = col.get(rec.id);
      if (held && (held.entry !== rec.entry || held.rule !== rec.rule)) return held;
      col.put({ ...rec, queue: held?.queue ?? [] });
      this.state.writeIn(tx, w);
      return undefined;
    });
  }

  /**
   * A question went out: when, and when its answer is due. The run's entry and the record are
   * written compact (see RunWrite.compact): they stay in memory while the person thinks.
   */
  async asked(id: string, at: number, until: number, w: RunWrite): Promise<void> {
    await this.store.transaction((tx) => {
      this.state.writeIn(tx, { ...w, compact: true });
      const rec = tx.col(BotDialogs).get(id);
      if (rec) tx.col(BotDialogs).put(compactRecord({ ...rec, asked_at: at, until }, tx.col(BotInbox).get(w.entry)));
    });
  }

  /**
   * The next answer (removed from the queue in the same write as `write(answer)`, the run's
   * progress holding it); or `timeout` when none came before `until`; or `parked`: the record
   * says the run waits, and a message or the timer wakes it. `gone`: the dialog was ended.
   */
  async take(id: string, now: number, until: number, write: (answer: BotEvent) => RunWrite): Promise<Taken> {
    return this.store.transaction((tx): Taken => {
      const col = tx.col(BotDialogs);
      const rec = col.get(id);
      if (!rec) return 'gone';
      const [answer, ...rest] = rec.queue;
      if (answer) {
        col.put({ ...rec, queue: rest, waiting: false });
        this.state.writeIn(tx, write(answer));
        return { answer };
      }
      if (until <= now) return 'timeout';
      if (!rec.waiting) col.put(compactRecord({ ...rec, waiting: true }, tx.col(BotInbox).get(rec.entry)));
      return 'parked';
    });
  }

  /**
   * Ends a dialog with its run's write: the record goes, and messages it did not read are
   * queued again as ordinary inbox entries (returned, to be handled).
   */
  async end(id: string, w: RunWrite | undefined, entry?: string): Promise<InboxEntry[]> {
    return this.store.transaction((tx) => {
      const rec = tx.col(BotDialogs).get(id);
      let requeued: InboxEntry[] = [];
      if (rec && (entry === undefined || rec.entry === entry)) {
        tx.col(BotDialogs).delete(id);
        requeued = this.state.requeueIn(tx, rec.queue);
      }
      if (w) this.state.writeIn(tx, w);
      return requeued;
    });
  }

  /**
   * A message of `entry` (not run yet) whose sender has a dialog in that conversation goes to
   * the dialog: queued there, and removed from the inbox, in one write. Returns the dialog and
   * whether its run was parked (it must be woken), or undefined when no dialog takes it.
   */
  async route(entry: InboxEntry, ids: string[]): Promise<{ rec: DialogRecord; wake: boolean } | undefined> {
    const col = this.store.read.col(BotDialogs);
    if (!ids.some((id) => col.get(id))) return undefined;
    return this.store.transaction((tx) => {
      const dialogs = tx.col(BotDialogs);
      const rec = ids.map((id) => dialogs.get(id)).find((r) => r !== undefined);
      const inbox = tx.col(BotInbox);
      const current = inbox.get(entry.id);
      if (!rec || !current || Object.keys(current.runs).length > 0) return undefined;
      inbox.delete(entry.id);
      dialogs.put({ ...rec, queue: [...rec.queue, entry.event], waiting: false });
      return { rec, wake: rec.waiting };
    });
  }

  /** The timer of a dialog fired: true when its run waits and must be woken (the answer is due). */
  async due(id: string, now: number): Promise<DialogRecord | undefined> {
    return this.store.transaction((tx) => {
      const rec = tx.col(BotDialogs).get(id);
      if (!rec?.waiting || rec.until === undefined || rec.until > now) return undefined;
      tx.col(BotDialogs).put({ ...rec, waiting: false });
      return rec;
    });
  }
}
