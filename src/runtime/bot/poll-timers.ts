import type { Clock } from '../../clock/clock.js';

/**
 * The two timers of a PollLoop: the timer of the next source due (a heartbeat, which a virtual
 * clock fires only after something changed, unless that source must fire anyway), and the
 * ordinary timer behind a heartbeat for what must fire later regardless (a source nothing
 * wakes, a backoff). Both call `fire` (the loop's kick).
 */
export class PollTimers {
  private cancelTimer?: () => void;
  private cancelPlain?: () => void;
  private plainAt = Infinity;
  private timerAt = Infinity;
  private timerHeartbeat = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  /**
   * Sets the timer to `next` (Infinity: none), and the ordinary timer to `plainAt`. The timer
   * already set stays when it is the same: one set when a source's poll started still lets a
   * virtual clock fire it after a change made while it was polling.
   */
  set(next: number, heartbeat: boolean, plainAt: number): void {
    this.armPlain(plainAt);
    if (this.cancelTimer && this.timerAt === next && this.timerHeartbeat === heartbeat) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    if (next !== Infinity) this.arm(next, heartbeat);
  }

  /**
   * Makes the timer fire by `at`: keeps one that fires no later, unless it is a heartbeat and
   * this one must fire anyway. */
  arm(at: number, heartbeat: boolean): void {
    if (this.stopped) return;
    if (this.cancelTimer && this.timerAt <= at && (heartbeat || !this.timerHeartbeat)) return;
    this.cancelTimer?.();
    this.timerAt = at;
    this.timerHeartbeat = heartbeat;
    this.cancelTimer = this.clock.setTimer(
      at,
      () => {
        this.cancelTimer = undefined;
        this.timerAt = Infinity;
        this.fire();
      },
      { heartbeat },
    );
  }

  /** Cancels both; nothing is armed any more. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.cancelPlain?.();
    this.cancelPlain = undefined;
  }

  /** The ordinary timer behind a heartbeat (Infinity: none). */
  private armPlain(at: number): void {
    if (this.plainAt === at && (at === Infinity || this.cancelPlain)) return;
    this.cancelPlain?.();
    this.cancelPlain = undefined;
    this.plainAt = Infinity;
    if (at === Infinity || this.stopped) return;
    this.plainAt = at;
    this.cancelPlain = this.clock.setTimer(at, () => {
      this.cancelPlain = undefined;
      this.plainAt = Infinity;
      this.fire();
    });
  }
}
