import { StorageUnavailableError } from './errors.js';
import type { StoreHealth } from './types.js';

/** The message of an error. Internal. */
export const errText = (err: unknown): string => (err as Error)?.message ?? String(err);

/** A short reason, without paths (it is shown on /healthz): `ENOSPC (write)`. Internal. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e?.code ? `${e.code}${e.syscall ? ` (${e.syscall})` : ''}` : errText(err).slice(0, 200);
}

export interface WriteGateOptions {
  now: () => number;
  warn: (msg: string, extra?: Record<string, unknown>) => void;
  /** Ms until the first test write after a failure, doubling up to `maxMs`. */
  retry: { firstMs: number; maxMs: number };
  /** Tries to make the journal writable again (a test write); throws or returns false when not. */
  tryWrite: () => Promise<boolean>;
  /** What refuses writes, in messages: default `the journal` (`the database` for PostgreSQL). */
  subject?: string;
  /** What the store writes to, in the refusal: default `its disk`. */
  medium?: string;
  /** Whether reads go on while writes are refused (default true; not for PostgreSQL). */
  readsGoOn?: boolean;
}

/**
 * Whether the file store takes writes. Open until a write fails; then closed — writes are
 * refused with `StorageUnavailableError` — while test writes are tried with back-off (in real
 * time, not the server's clock: the disk recovers in the real world, also under a virtual
 * clock); the first that succeeds opens it again. Internal to the file store.
 *
 * @example
 * const gate = new WriteGate({ now: Date.now, warn, retry: { firstMs: 1000, maxMs: 30_000 }, tryWrite });
 * if (gate.isDown) throw gate.refusal();
 */
export class WriteGate {
  private down: { reason: string; since: number; delayMs: number; retryAt: number; timer?: NodeJS.Timeout } | undefined;
  private lastReason = '';
  private closed = false;
  private readonly downListeners = new Set<() => void>();

  constructor(private readonly o: WriteGateOptions) {}

  get isDown(): boolean {
    return this.down !== undefined;
  }

  health(): StoreHealth {
    const d = this.down;
    return d
      ? { writable: false, reason: d.reason, since: d.since, retryAfterMs: Math.max(0, d.retryAt - this.o.now()) }
      : { writable: true };
  }

  /** The error a refused write gets (also after the gate opened again, for a take-back seen late). */
  refusal(): StorageUnavailableError {
    const d = this.down;
    return new StorageUnavailableError(
      d?.reason ?? this.lastReason,
      d ? Math.max(0, d.retryAt - this.o.now()) : 0,
      this.o.medium,
    );
  }

  /** Calls `fn` each time a write fails (the gate is or goes down). Returns the unsubscribe. */
  onDown(fn: () => void): () => void {
    this.downListeners.add(fn);
    return () => void this.downListeners.delete(fn);
  }

  /** A write failed: refuse writes from now on and schedule a test write. */
  failed(err: unknown): void {
    const reason = reasonOf(err);
    this.lastReason = reason;
    if (!this.down) {
      const delayMs = this.o.retry.firstMs;
      this.down = { reason, since: this.o.now(), delayMs, retryAt: this.o.now() + delayMs };
      this.o.warn(
        `${this.o.subject ?? 'the journal'} cannot be written (${errText(err)}): ` +
          `writes are refused until a test write ` +
          `succeeds${this.o.readsGoOn === false ? '' : '; reads go on'}`,
        { reason },
      );
    }
    this.schedule();
    for (const fn of [...this.downListeners]) fn();
  }

  /** One test write now (at close); true when writes are taken again. */
  async retryNow(): Promise<boolean> {
    if (this.down && (await this.attempt())) this.open();
    return !this.down;
  }

  /** Stops retrying. */
  close(): void {
    this.closed = true;
    clearTimeout(this.down?.timer);
  }

  private schedule(): void {
    const d = this.down;
    if (!d || this.closed) return;
    clearTimeout(d.timer);
    d.retryAt = this.o.now() + d.delayMs;
    d.timer = setTimeout(() => void this.probe(), d.delayMs);
    d.timer.unref(); // a pending retry never keeps the process alive
  }

  private async probe(): Promise<void> {
    const d = this.down;
    if (!d || this.closed) return;
    if (await this.attempt()) {
      this.open();
      return;
    }
    d.delayMs = Math.min(d.delayMs * 2, this.o.retry.maxMs);
    this.schedule();
  }

  private async attempt(): Promise<boolean> {
    try {
      return await this.o.tryWrite();
    } catch (err) {
      if (this.down) this.down.reason = this.lastReason = reasonOf(err);
      return false;
    }
  }

  private open(): void {
    const d = this.down;
    if (!d) return;
    clearTimeout(d.timer);
    this.down = undefined;
    this.o.warn(
      `${this.o.subject ?? 'the journal'} takes writes again (refused for ` +
        `${Math.round((this.o.now() - d.since) / 1000)} s)`,
    );
  }
}
