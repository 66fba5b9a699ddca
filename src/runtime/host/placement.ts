import type { BotEvent } from '../contract/types.js';
import type { CompiledBot } from '../define/bot.js';
import type { BotPlacement } from '../ports.js';
import { BotState } from '../state/bot-state.js';
import type { BotStatus, HostOptions, Slot } from './host-options.js';

/** What the placement part of a host reads of the host, and the two things it asks it to do. */
export interface PlacementContext {
  host: HostOptions;
  slots: ReadonlyMap<string, Slot>;
  /** The slot whose running (or last valid) version has this name. */
  named(name: string): Slot | undefined;
  stopped(): boolean;
  /** Starts a slot's bot; `firstSpreadMs`: its first polls come sooner. */
  launch(slot: Slot, bot: CompiledBot, firstSpreadMs?: number): Promise<void>;
  /** Runs `fn` after the reloads and placement changes before it. */
  serialised<T>(fn: () => Promise<T> | T): Promise<T>;
}

/**
 * Placement across processes, in one file: with a BotPlacement (several processes on one
 * database) a host runs only the bots whose lease it holds, queues pushes for the bots that run
 * elsewhere (in the storage's shared store), and reports those as `elsewhere`. Without one, it
 * runs every bot. Where each bot's state lives (fenced by its lease or not) is the storage's
 * answer (BotStorage), not this class's.
 */
export class HostPlacement {
  constructor(private readonly c: PlacementContext) {}

  private get placement(): BotPlacement | undefined {
    return this.c.host.placement;
  }

  /** Starts taking part: the placement gives bots to this process and takes them back. */
  async attach(): Promise<void> {
    await this.placement?.attach({
      run: (name) => void this.c.serialised(() => this.runPlaced(name)),
      halt: (name) => this.c.serialised(() => this.haltPlaced(name)),
    });
  }

  /** Whether this process may run the bot now. */
  mayRun(name: string): boolean {
    return !this.placement || this.placement.owns(name);
  }

  /** After a reload: the bots this process could run. */
  offer(): void {
    this.placement?.offer(
      [...this.c.slots.values()].flatMap((s) => (s.bot?.enabled && this.c.named(s.bot.name) === s ? [s.bot.name] : [])),
    );
  }

  /** The status of a valid, enabled bot that does not run here because another process has it. */
  elsewhere(slot: Slot): Pick<BotStatus, 'status' | 'message'> | undefined {
    if (slot.runner || !slot.bot?.enabled || !this.placement) return undefined;
    const owner = this.placement.ownerOf(slot.bot.name);
    return {
      status: 'elsewhere',
      message: owner ? `runs in process ${owner}` : 'waiting for its lease (another process had it)',
    };
  }

  /** The bots with an enabled rule on `trigger` that are valid here but run in another process. */
  listenersElsewhere(trigger: string): string[] {
    if (!this.placement || this.c.stopped()) return [];
    const out: string[] = [];
    for (const s of this.c.slots.values()) {
      const bot = s.bot;
      if (!bot?.enabled || s.runner || this.c.named(bot.name) !== s) continue;
      if (bot.rules.some((r) => r.enabled && r.triggers.some((t) => t.def.name === trigger))) out.push(bot.name);
    }
    return out;
  }

  /**
   * Queues a pushed event for the bots listening to `trigger` that run in another process, in
   * their inbox in the shared store, exactly once per key; their owner handles it (InboxFeed).
   * Returns the bots it was queued for.
   */
  async pushElsewhere(trigger: string, event: Omit<BotEvent, 'at'>, onlyBot?: string): Promise<string[]> {
    const names = this.listenersElsewhere(trigger).filter((n) => onlyBot === undefined || n === onlyBot);
    const out: string[] = [];
    if (names.length === 0) return out;
    const store = await this.c.host.storage.shared?.();
    if (!store) throw new Error('bots run in other processes but the storage has no shared store');
    for (const name of names) {
      if (await new BotState(store, name).push(`push:${trigger}`, { ...event, at: this.c.host.clock.now() }))
        out.push(name);
    }
    return out;
  }

  /** Gives every lease back (halting the bots first). */
  async stop(): Promise<void> {
    await this.placement?.stop();
  }

  /** The placement gave this process the bot: start it (its state is read afresh). */
  private async runPlaced(name: string): Promise<void> {
    const slot = this.c.named(name);
    if (this.c.stopped() || !slot?.bot || !slot.bot.enabled || slot.runner) return;
    // what it missed while it moved is read within a second (not spread over its poll)
    await this.c.launch(slot, slot.bot, 1000);
  }

  /** The placement takes the bot away: stop it here. */
  private async haltPlaced(name: string): Promise<void> {
    const slot = this.c.named(name);
    if (!slot?.runner) return;
    const runner = slot.runner;
    slot.runner = undefined;
    await runner.stop();
  }
}
