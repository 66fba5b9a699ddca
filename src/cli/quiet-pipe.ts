/**
 * Makes a closed reader of stdout end the command quietly: `pinbot bots list | head -1` reads
 * one line and closes the pipe; the next write fails with EPIPE, which Node throws as an
 * unhandled 'error' event (a stack trace and exit 1). The reader has what it wanted: exit 0,
 * printing nothing. Any other stream error is left as it was.
 *
 * Logs of `serve` do not go through `process.stdout` (pino writes to the file descriptor and
 * handles its own errors), so a server is never stopped by this.
 *
 * @example exitQuietlyOnClosedPipe(); // first thing in the CLI
 */
export function exitQuietlyOnClosedPipe(
  stream: NodeJS.WriteStream = process.stdout,
  exit: (code: number) => void = (c) => process.exit(c),
): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return exit(0);
    // not ours to swallow: rethrown as the unhandled error it would have been
    throw err;
  });
}
