import { pino } from 'pino';

/** What pino needs of a destination, plus the figures of this one. */
export interface BoundedDestination {
  write(line: string): boolean;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
  end(): void;
  /** Lines dropped since the start (reported in the log as they happen, once there is room). */
  readonly dropped: number;
  /** Bytes accepted and not yet written. */
  readonly pending: number;
  /** The most bytes ever pending at once: never above the bound. */
  readonly maxPending: number;
}

/** The minimal stream a BoundedDestination writes to (pino's SonicBoom, or a test double). Internal. */
export interface ByteSink {
  write(data: string): unknown;
  on(event: 'write', listener: (bytes: number) => void): unknown;
  flush?(cb?: (err?: Error) => void): void;
  flushSync?(): void;
  end?(): void;
}

/**
 * A log destination that never holds more than `maxBytes` of unwritten output. pino writes
 * asynchronously: when stdout is slower than the log (a full pipe, a stalled collector, a
 * flood of requests), its buffer would grow without bound — 3.5 GB in a minute under a flood
 * of 4xx lines. Here a line that does not fit is dropped and counted; once there is room again
 * a warning line says how many were dropped (`{"msg":"log lines dropped",
 * "dropped":N}`), before the next line. Dropping only ever loses log lines, never requests.
 *
 * @example
 * const log = pino({ level: 'info' }, boundedDestination({ maxBytes: 4 << 20 }));
 */
export function boundedDestination({
  maxBytes,
  sink = pino.destination({ dest: 1, sync: false }) as unknown as ByteSink,
}: {
  maxBytes: number;
  sink?: ByteSink;
}): BoundedDestination {
  let pending = 0;
  let maxPending = 0;
  let dropped = 0;
  let unreported = 0;
  sink.on('write', (n) => {
    pending = Math.max(0, pending - n);
  });
  const accept = (line: string): boolean => {
    const n = Buffer.byteLength(line);
    if (pending + n > maxBytes) return false;
    pending += n;
    maxPending = Math.max(maxPending, pending);
    sink.write(line);
    return true;
  };
  return {
    write(line: string): boolean {
      if (unreported > 0) {
        const report = `${JSON.stringify({
          level: 40,
          time: Date.now(),
          msg: 'log lines dropped: stdout was slower than the log (log.buffer_bytes)',
          dropped: unreported,
        })}\n`;
        if (accept(report)) unreported = 0;
      }
      if (!accept(line)) {
        dropped++;
        unreported++;
      }
      return true;
    },
    flush: (cb) => (sink.flush ? sink.flush(cb) : cb?.()),
    flushSync: () => sink.flushSync?.(),
    end: () => sink.end?.(),
    get dropped() {
      return dropped;
    },
    get pending() {
      return pending;
    },
    get maxPending() {
      return maxPending;
    },
  };
}
