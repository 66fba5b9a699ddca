import type { BotEvent } from '../contract/types.js';
import type { ReadCollection, Tx } from '../../store/core/types.js';
import {
  BotDialogs,
  BotInbox,
  dialogId,
  type BotState,
  type DialogRecord,
  type InboxEntry,
  type RunWrite,
} from './bot-state.js';
import { lowerBound } from '../../util/sorted.js';
import { compactJson, compactSeed, keepParts, keepText } from './compact.js';

/**
 * The very string a collection's `bot` index holds for `id` (the one its map of records is
 * keyed by: the id of the record's first write), or `id` when none. A record compacted with it
 * holds that string rather than a copy. Internal.
 */
function heldId(col: ReadCollection<{ id: string }>, bot: string, id: string): string {
  const ids = col.ids('bot', bot);
  const at = lowerBound(ids, id);
  return ids[at] === id ? ids[at] : id;
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

  /**
   * The dialogs of one person with this bot: the ids that begin with the bot's name and the PIN
   * (see dialogId), next to each other in the bot's ascending ids (no index per person).
   */
  ofPerson(pin: string): DialogRecord[] {
    const col = this.store.read.col(BotDialogs);
    const ids = col.ids('bot', this.state.bot);
    const prefix = dialogId(this.state.bot, pin, '');
    const out: DialogRecord[] = [];
    for (let i = lowerBound(ids, prefix); i < ids.length && ids[i]!.startsWith(prefix); i++)
      out.push(col.get(ids[i]!)!);
    return out;
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
      const dialogs = tx.col(BotDialogs);
      const seed = compactSeed();
      keepText(seed, heldId(tx.col(BotInbox), this.state.bot, w.entry));
      keepText(seed, heldId(dialogs, this.state.bot, id));
      this.state.writeIn(tx, { ...w, compact: seed });
      const rec = dialogs.get(id);
      if (rec) dialogs.put(compactJson({ ...rec, asked_at: at, until }, seed));
    });
  }

  /** A record to keep while its run waits: sharing its entry's parts (see compactJson). */
  private compactRecord(tx: Tx, rec: DialogRecord, entry: InboxEntry | undefined): DialogRecord {
    const seed = compactSeed();
    keepText(seed, heldId(tx.col(BotDialogs), this.state.bot, rec.id));
    keepParts(seed, entry);
    return compactJson(rec, seed);
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
      if (!rec.waiting) col.put(this.compactRecord(tx, { ...rec, waiting: true }, tx.col(BotInbox).get(rec.entry)));
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
