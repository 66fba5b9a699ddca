import type { Clock } from '../../clock/clock.js';

/**
 * The timers of a bot's waiting dialogs: one per dialog, on the bot's clock (an ordinary timer,
 * so a virtual clock's advance fires it at its own time, and a real one with no message
 * coming). A dialog's deadline is written with its run, so after a restart the resumed run
 * arms its timer again for what is left. Internal.
 */
export class DialogTimers {
  private readonly timers = new Map<string, { at: number; cancel: () => void }>();

  constructor(private readonly clock: Clock) {}

  /** Fires `fn` at `at` for dialog `id` (a timer already set for that time is kept). */
  arm(id: string, at: number, fn: () => void): void {
    const had = this.timers.get(id);
    if (had?.at === at) return;
    had?.cancel();
    const cancel = this.clock.setTimer(at, () => {
      if (this.timers.get(id)?.cancel === cancel) this.timers.delete(id);
      fn();
    });
    this.timers.set(id, { at, cancel });
  }

  cancel(id: string): void {
    this.timers.get(id)?.cancel();
    this.timers.delete(id);
  }

  /** Timers set now (the bench counts them). */
  get size(): number {
    return this.timers.size;
  }

  clear(): void {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }
}
