import type { UserRef } from '../../client/types.js';
import type { BotState } from '../state/bot-state.js';
import type { BotEvent } from '../contract/types.js';
import type { LoopGuardOptions } from '../define/bot.js';

/**
 * Stops two bots (or a bot and an auto-responder) from answering each other for ever. It counts
 * the runs that took an action for events of one conversation (or, for events outside a
 * conversation, of one sender); `maxReplies` of them within `withinMs` pause that conversation
 * for `pauseMs`: its events are traced `loop_suspected` and not run. Pauses are persisted.
 *
 * @example const guard = new LoopGuard(DEFAULT_LOOP_GUARD, state); if (guard.pausedUntil(key, now)) …
 */
export class LoopGuard {
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly o: LoopGuardOptions | undefined,
    private readonly state: BotState,
  ) {}

  /** What the guard counts an event under: its conversation, else who caused it. */
  static keyOf(event: BotEvent, actor: UserRef | undefined): string | undefined {
    const conv = event.payload.conversation_id;
    if (typeof conv === 'string') return `conversation ${conv}`;
    return actor ? `user ${actor.pin_code}` : undefined;
  }

  /** When the pause of `key` ends, if it is paused now. */
  pausedUntil(key: string | undefined, now: number): number | undefined {
    if (!this.o || key === undefined) return undefined;
    const until = this.state.meta().paused?.[key];
    return until !== undefined && until > now ? until : undefined;
  }

  /** Counts a run that acted; returns the end of the pause when this one tripped the guard. */
  async acted(key: string | undefined, now: number): Promise<number | undefined> {
    if (!this.o || key === undefined) return undefined;
    const times = (this.recent.get(key) ?? []).filter((t) => t > now - this.o!.withinMs);
    times.push(now);
    if (times.length < this.o.maxReplies) {
      this.recent.set(key, times);
      if (this.recent.size > 10_000) this.prune(now);
      return undefined;
    }
    this.recent.delete(key);
    const until = now + this.o.pauseMs;
    await this.state.pause(key, until, now);
    return until;
  }

  private prune(now: number): void {
    for (const [k, times] of this.recent) if (times.every((t) => t <= now - this.o!.withinMs)) this.recent.delete(k);
  }
}
