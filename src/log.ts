import { pino, type Logger } from 'pino';
import { createRequire } from 'node:module';
import { boundedDestination, type BoundedDestination, type ByteSink } from './log-destination.js';

/** Header values that must never reach a log line (the request log writes no others either). */
export const REDACT = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'api_key',
  '*.api_key',
];

const destinations = new WeakMap<Logger, BoundedDestination>();

/** The bounded destination of a logger made by createLogger (its drop figures), if it has one. */
export function logDestination(log: Logger): BoundedDestination | undefined {
  return destinations.get(log);
}

export interface LoggerOptions {
  level?: string;
  /** Pretty lines (default: when stdout is a terminal). */
  pretty?: boolean;
  /** Write here instead of stdout, unbounded (tests capture lines this way). */
  destination?: NodeJS.WritableStream;
  /** Unwritten output kept for a slow stdout; beyond it lines are dropped and counted (config `log.buffer_bytes`). */
  bufferBytes?: number;
  /** What the bounded destination writes to (default stdout). */
  sink?: ByteSink;
}

/**
 * The process logger: JSON lines, pretty when stdout is a terminal, keys redacted. Output to
 * stdout goes through a bounded destination: a slow reader costs dropped lines (counted and
 * reported), never memory.
 *
 * @example const log = createLogger({ level: 'info' });
 */
export function createLogger({
  level = 'info',
  pretty = process.stdout.isTTY === true,
  destination,
  bufferBytes = 4 << 20,
  sink,
}: LoggerOptions = {}): Logger {
  const redact = { paths: REDACT, censor: '[redacted]' };
  // a silent logger writes nothing: no formatter to load (`bots validate` at a terminal)
  if (level === 'silent') pretty = false;
  if (destination) return pino({ level, redact }, destination as unknown as pino.DestinationStream);
  const bounded = boundedDestination({ maxBytes: bufferBytes, sink });
  let out: pino.DestinationStream = bounded;
  if (pretty) {
    // Formatted in this thread (not pino's worker transport, whose queue has no bound).
    // Loaded only for a terminal: CLI calls and servers under a supervisor never need it.
    const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    const format = prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
    out = {
      write: (line: string) => bounded.write(format(line)),
      flush: (cb?: (err?: Error) => void) => bounded.flush(cb),
    } as pino.DestinationStream;
  }
  const log = pino({ level, redact }, out);
  destinations.set(log, bounded);
  return log;
}

export type { Logger };
