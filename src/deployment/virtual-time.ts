import { VirtualClock } from '../clock/virtual-clock.js';
import { defineCollection, type Store } from '../store/core/types.js';

/** The virtual time of a `serve --virtual-clock` data directory. */
interface ClockRecord {
  readonly id: 'virtual';
  /** ms since the epoch. */
  readonly now: number;
}

/** Where the virtual time is kept (one record, `virtual`). */
export const ClockState = defineCollection<ClockRecord>({ name: 'server_clock' });

/** The virtual time saved in a store, if a virtual clock ever ran on it. */
export function savedVirtualTime(store: Store): number | undefined {
  return store.read.col(ClockState).get('virtual')?.now;
}

/**
 * A virtual clock whose time is saved in the store after every move (`advance`, `set`), so a
 * `serve --virtual-clock` server restarts at its last virtual time instead of going back to
 * the real one. Internal to server.ts.
 */
class SavedVirtualClock extends VirtualClock {
  constructor(
    start: number,
    private readonly store: Store,
  ) {
    super(start);
  }

  override async advanceTo(to: number): Promise<void> {
    try {
      await super.advanceTo(to);
    } finally {
      await this.save();
    }
  }

  override set(ms: number): void {
    super.set(ms);
    void this.save().catch(() => undefined);
  }

  private async save(): Promise<void> {
    const now = this.now();
    if (savedVirtualTime(this.store) === now) return;
    await this.store.transaction((tx) => void tx.col(ClockState).put({ id: 'virtual', now }));
  }
}

/**
 * The virtual clock of a server on `store`: at `start` when one is given, else at the time saved
 * there (a restart goes on where the clock was), else now.
 *
 * @example const clock = virtualClockOn(store); // `serve --virtual-clock`
 */
export function virtualClockOn(store: Store, start?: number): VirtualClock {
  return new SavedVirtualClock(start ?? savedVirtualTime(store) ?? Date.now(), store);
}
