/**
 * The signatures accepted within the replay window, so the same signed request is taken once
 * even within the window. Memory is bounded: entries leave when their window ends (they are
 * kept in the order they came, so the oldest go first), and at most `max` are kept — past that
 * a new delivery is refused until room is made, rather than forgetting one that may be replayed.
 *
 * @example const seen = new SeenSignatures(300_000, 10_000); if (seen.has(sig, now)) …; seen.add(sig, now);
 */
export class SeenSignatures {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  /** Whether `sig` was accepted within the window. */
  has(sig: string, nowMs: number): boolean {
    this.expire(nowMs);
    return this.until.has(sig);
  }

  /** Whether one more can be remembered now. */
  hasRoom(nowMs: number): boolean {
    this.expire(nowMs);
    return this.until.size < this.max;
  }

  /** Ms until the oldest entry leaves (a Retry-After when full). */
  nextFreeIn(nowMs: number): number {
    const first = this.until.values().next();
    return first.done ? 0 : Math.max(0, first.value - nowMs);
  }

  /** Remembers `sig` until its window ends. */
  add(sig: string, nowMs: number): void {
    this.until.delete(sig);
    this.until.set(sig, nowMs + this.windowMs);
  }

  get size(): number {
    return this.until.size;
  }

  private expire(nowMs: number): void {
    for (const [sig, end] of this.until) {
      if (end > nowMs) break;
      this.until.delete(sig);
    }
  }
}
