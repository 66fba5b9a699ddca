import type { Clock } from '../../clock/clock.js';

/**
 * The timers of a bot's waiting dialogs, on the bot's clock: the deadline of each dialog (its
 * id → clock ms) and one clock timer, at the earliest (an ordinary timer, so a virtual clock's
 * advance fires it at its own time, and a real one with no message coming). A waiting dialog
 * costs one map entry here, not a timer and its closures (the bench `dialogs` counts the heap of
 * 1,000 waiting at once). A dialog's deadline is written with its run, so after a restart the
 * resumed run arms its timer again for what is left. Internal.
 */
export class DialogTimers {
  private readonly due = new Map<string, number>();
  /** The clock timer, set for the earliest deadline (or earlier: a cancelled one's). */
  private armed: { at: number; cancel: () => void } | undefined;

  /** `fire(id)` is called when dialog `id`'s deadline comes. */
  constructor(
    private readonly clock: Clock,
    private readonly fire: (id: string) => void,
  ) {}

  /** Calls `fire(id)` at `at` (a deadline already set for that dialog is replaced). */
  arm(id: string, at: number): void {
    if (this.due.get(id) === at) return;
    this.due.set(id, at);
    if (!this.armed || at < this.armed.at) this.schedule(at);
  }

  /** The dialog's deadline goes (the clock timer, if it was the earliest, finds nothing due). */
  cancel(id: string): void {
    this.due.delete(id);
  }

  /** Deadlines set now (the bench counts them). */
  get size(): number {
    return this.due.size;
  }

  clear(): void {
    this.armed?.cancel();
    this.armed = undefined;
    this.due.clear();
  }

  private schedule(at: number): void {
    this.armed?.cancel();
    const cancel = this.clock.setTimer(at, () => this.ring(cancel));
    this.armed = { at, cancel };
  }

  /** The clock timer rang: every deadline passed fires (in deadline order), the next one is set. */
  private ring(cancel: () => void): void {
    if (this.armed?.cancel !== cancel) return;
    this.armed = undefined;
    const now = this.clock.now();
    const ready: Array<[string, number]> = [];
    let next = Number.POSITIVE_INFINITY;
    // one pass over the deadlines per ring: a ring per distinct deadline, not per message
    for (const [id, at] of this.due) {
      if (at <= now) ready.push([id, at]);
      else if (at < next) next = at;
    }
    ready.sort((a, b) => a[1] - b[1]);
    for (const [id] of ready) this.due.delete(id);
    if (next !== Number.POSITIVE_INFINITY) this.schedule(next);
    for (const [id] of ready) this.fire(id);
  }
}
