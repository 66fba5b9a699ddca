import type { BotEvent } from '../contract/types.js';
import type { BotPlacement } from '../ports.js';
import { BotState } from '../state/bot-state.js';
import type { BotStatus, HostOptions, Slot } from './host-options.js';
import type { BotSlots } from './slots.js';

/**
 * Placement across processes, in one file: with a BotPlacement (several processes on one
 * database) a host runs only the bots whose lease it holds, queues pushes for the bots that run
 * elsewhere (in the storage's shared store), and reports those as `elsewhere`. Without one, it
 * runs every bot. Where each bot's state lives (fenced by its lease or not) is the storage's
 * answer (BotStorage), not this class's. It places the host's slots itself (BotSlots): it
 * starts and halts their bots, in the host's turns.
 */
export class HostPlacement {
  constructor(
    private readonly host: HostOptions,
    private readonly bots: BotSlots,
  ) {}

  private get placement(): BotPlacement | undefined {
    return this.host.placement;
  }

  /** Starts taking part: the placement gives bots to this process and takes them back. */
  async attach(): Promise<void> {
    await this.placement?.attach({
      run: (name) => void this.bots.serialised(() => this.runPlaced(name)),
      halt: (name) => this.bots.serialised(() => this.haltPlaced(name)),
    });
  }

  /** Whether this process may run the bot now. */
  mayRun(name: string): boolean {
    return !this.placement || this.placement.owns(name);
  }

  /** After a reload: the bots this process could run. */
  offer(): void {
    this.placement?.offer(
      [...this.bots.slots.values()].flatMap((s) =>
        s.bot?.enabled && this.bots.named(s.bot.name) === s ? [s.bot.name] : [],
      ),
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
    if (!this.placement || this.bots.stopped) return [];
    const out: string[] = [];
    for (const s of this.bots.slots.values()) {
      const bot = s.bot;
      if (!bot?.enabled || s.runner || this.bots.named(bot.name) !== s) continue;
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
    const store = await this.host.storage.shared?.();
    if (!store) throw new Error('bots run in other processes but the storage has no shared store');
    for (const name of names) {
      if (await new BotState(store, name).push(`push:${trigger}`, { ...event, at: this.host.clock.now() }))
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
    const slot = this.bots.named(name);
    if (this.bots.stopped || !slot?.bot || !slot.bot.enabled || slot.runner) return;
    // what it missed while it moved is read within a second (not spread over its poll)
    await this.bots.launch(slot, slot.bot, 1000);
  }

  /** The placement takes the bot away: stop it here. */
  private async haltPlaced(name: string): Promise<void> {
    const slot = this.bots.named(name);
    if (slot) await this.bots.halt(slot);
  }
}
