interface Job {
  run: () => Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The queue of a `queued` rule: one run at a time, taken round robin by sender, so one sender's
 * backlog never makes everyone else wait behind it. A sender's own events keep their order.
 * With `maxQueued`, a sender may have at most that many runs waiting; more are refused (the
 * caller traces them).
 *
 * @example const q = new FairQueue(5); const p = q.push('ABC123', () => run()); if (!p) traceDropped();
 */
export class FairQueue {
  /** Waiting runs by sender; the map's order is the round. */
  private readonly bySender = new Map<string, Job[]>();
  private busy = false;

  constructor(private readonly maxQueued?: number) {}

  /** Queues a run; resolves when it has run. Undefined when the sender's backlog is full. */
  push(sender: string, run: () => Promise<void>): Promise<void> | undefined {
    const q = this.bySender.get(sender);
    if (this.maxQueued !== undefined && (q?.length ?? 0) >= this.maxQueued) return undefined;
    return new Promise<void>((resolve, reject) => {
      if (q) q.push({ run, resolve, reject });
      else this.bySender.set(sender, [{ run, resolve, reject }]);
      this.pump();
    });
  }

  /** Runs waiting, by sender (traces and `bots list`). */
  waiting(): number {
    let n = 0;
    for (const q of this.bySender.values()) n += q.length;
    return n;
  }

  private pump(): void {
    if (this.busy) return;
    const next = this.bySender.entries().next();
    if (next.done) return;
    const [sender, q] = next.value;
    const job = q.shift()!;
    // the sender goes to the end of the round
    this.bySender.delete(sender);
    if (q.length) this.bySender.set(sender, q);
    this.busy = true;
    job
      .run()
      .then(job.resolve, job.reject)
      .finally(() => {
        this.busy = false;
        this.pump();
      });
  }
}
