import { Serial } from '../util/serial.js';
import { sleepOn, type Clock, type Release, type TimerOptions } from './clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  heartbeat: boolean;
  parked: boolean;
  /** The clock's change count when the timer was set (heartbeats fire only after a change). */
  epoch: number;
}

export interface VirtualClockOptions {
  /**
   * Longest real time `advance` waits for held work to finish before it fails naming the work
   * (a hung run would otherwise hang the caller). Default 60 s.
   */
  stallMs?: number;
}

/** Thrown by `advance` when held work does not finish within `stallMs` of real time. */
export class ClockStalledError extends Error {
  constructor(labels: string[], ms: number) {
    super(
      `the virtual clock waited ${Math.round(ms / 1000)} s of real time for work ` +
        `that did not finish: ` +
        `${labels.slice(0, 5).join(', ') || 'unknown'}${labels.length > 5 ? ` and ${labels.length - 5} more` : ''}`,
    );
    this.name = 'ClockStalledError';
  }
}

/**
 * A clock that moves only when told. `advance`/`advanceTo` fire every due timer at its own
 * time, in order, and return only when the work they woke has settled: no held work is
 * runnable (bot runs, polls, jobs — see `Clock.hold`), and nothing is due. Used by
 * `serve --virtual-clock`, scenarios and the test kit.
 *
 * @example
 * const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
 * await clock.advance(86_400_000); // a day: UBI, schedules and waits fire, and settle
 */
export class VirtualClock implements Clock {
  readonly virtual = true;
  private ms: number;
  private readonly timers: Timer[] = [];
  private seq = 0;
  private epoch = 0;
  private readonly held = new Map<number, string>();
  private holdSeq = 0;
  private parkedArmed = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly advances = new Serial();
  private readonly stallMs: number;
  private readonly touchListeners = new Set<() => void>();

  constructor(start: number = Date.now(), { stallMs = 60_000 }: VirtualClockOptions = {}) {
    this.ms = start;
    this.stallMs = stallMs;
  }

  now(): number {
    return this.ms;
  }

  setTimer(at: number, fn: () => void, opts: TimerOptions = {}): () => void {
    const t: Timer = {
      at,
      seq: this.seq++,
      fn,
      heartbeat: opts.heartbeat === true,
      parked: opts.parked === true,
      epoch: this.epoch,
    };
    // sorted by (at, seq): a binary search for the insertion point
    let lo = 0;
    let hi = this.timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = this.timers[mid]!;
      if (m.at < at || (m.at === at && m.seq < t.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.timers.splice(lo, 0, t);
    if (t.parked) {
      this.parkedArmed++;
      this.checkIdle();
    }
    return () => {
      const i = this.timers.indexOf(t);
      if (i === -1) return;
      this.timers.splice(i, 1);
      if (t.parked) this.parkedArmed--; // the work resumes (its wait was aborted)
    };
  }

  sleepUntil(at: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void> {
    return sleepOn(this, at, signal, opts);
  }

  sleep(ms: number, signal?: AbortSignal, opts?: TimerOptions): Promise<void> {
    return sleepOn(this, this.ms + ms, signal, opts);
  }

  hold(label: string): Release {
    const id = this.holdSeq++;
    this.held.set(id, label);
    return () => {
      if (this.held.delete(id)) this.checkIdle();
    };
  }

  touch(): void {
    this.epoch++;
    for (const fn of this.touchListeners) fn();
  }

  /**
   * Calls `fn` on every `touch` (every commit, on an embedded server): a scenario counts them to
   * know when to look for events again. Returns the function that stops it.
   */
  onTouch(fn: () => void): () => void {
    this.touchListeners.add(fn);
    return () => void this.touchListeners.delete(fn);
  }

  /** Moves the time without firing anything (tests set a start time with it). */
  set(ms: number): void {
    this.ms = ms;
    this.epoch++;
  }

  /** Moves time forward by `ms`, firing every due timer on the way, and settles. */
  advance(ms: number): Promise<void> {
    return this.advanceTo(this.ms + ms);
  }

  /**
   * Moves time to `to`, firing every timer due on the way at its own time, in order, and
   * returns when everything woken has settled. Calls are serialised. Moving backwards fires
   * nothing.
   */
  advanceTo(to: number): Promise<void> {
    return this.advances.run(() => this.run(to));
  }

  /** Fires what is due now and waits until the work it woke (and any held work) has settled. */
  settle(): Promise<void> {
    return this.advanceTo(this.ms);
  }

  /** Work held right now (labels), for diagnostics. */
  busy(): string[] {
    return [...this.held.values()];
  }

  /** Timers waiting, as times (diagnostics and tests). */
  pending(): number[] {
    return this.timers.map((t) => t.at);
  }

  private async run(to: number): Promise<void> {
    if (to < this.ms) {
      this.ms = to;
      this.epoch++;
      await this.quiet();
      return;
    }
    for (;;) {
      await this.quiet();
      const t = this.nextDue(to);
      if (!t) {
        if (this.ms < to) {
          this.ms = to;
          continue;
        }
        return;
      }
      this.fire(t);
    }
  }

  private runnable(): number {
    return this.held.size - this.parkedArmed;
  }

  /** The first timer due by `to` that may fire (a heartbeat only after a change). Internal. */
  private nextDue(to: number): Timer | undefined {
    for (const t of this.timers) {
      if (t.at > to) return undefined;
      if (!t.heartbeat || t.epoch < this.epoch) return t;
    }
    return undefined;
  }

  private fire(t: Timer): void {
    this.timers.splice(this.timers.indexOf(t), 1);
    if (t.at > this.ms) this.ms = t.at;
    if (!t.heartbeat) this.epoch++;
    if (t.parked) this.parkedArmed--;
    t.fn();
  }

  private checkIdle(): void {
    if (this.runnable() > 0) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  /**
   * Resolves once no held work is runnable for three turns of the event loop in a row (work
   * hands over to other work through promises and I/O callbacks, so one idle moment is not
   * enough). Internal.
   */
  private async quiet(): Promise<void> {
    const started = Date.now();
    let calm = 0;
    while (calm < 3) {
      await new Promise<void>((r) => setImmediate(r));
      if (this.runnable() <= 0) {
        calm++;
        continue;
      }
      calm = 0;
      const left = this.stallMs - (Date.now() - started);
      if (left <= 0) throw new ClockStalledError(this.busy(), Date.now() - started);
      await new Promise<void>((resolve) => {
        const guard = setTimeout(resolve, left);
        this.idleWaiters.push(() => {
          clearTimeout(guard);
          resolve();
        });
      });
    }
  }
}
