import { pino, type Logger } from 'pino';

/** Header values that must never reach a log line. */
export const REDACT = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'api_key',
  '*.api_key',
];

/**
 * The process logger: JSON lines, pretty when stdout is a terminal, keys redacted.
 *
 * @example const log = createLogger({ level: 'info' });
 */
export function createLogger({ level = 'info', pretty = process.stdout.isTTY === true, destination }: { level?: string; pretty?: boolean; destination?: NodeJS.WritableStream } = {}): Logger {
  const redact = { paths: REDACT, censor: '[redacted]' };
  if (destination) return pino({ level, redact }, destination as unknown as pino.DestinationStream);
  if (pretty) {
    return pino({ level, redact, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } });
  }
  return pino({ level, redact });
}

export type { Logger };
