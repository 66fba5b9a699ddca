// Errors of `startServer` that the CLI prints as one line. Kept apart from server.ts so the
// CLI can recognise them without loading express for every command.
import { OperatorError } from './util/operator-error.js';

/** Thrown with a one-line, actionable message when the port is taken. */
export class PortInUseError extends OperatorError {
  constructor(host: string, port: number) {
    super(
      `port ${port} on ${host} is already in use. Stop the other process, or start ` +
        `with --port N (--port 0 picks a free port).`,
    );
    this.name = 'PortInUseError';
  }
}

/** Thrown with a one-line, actionable message when the server cannot listen for another reason. */
export class ListenError extends OperatorError {
  constructor(host: string, port: number, err: NodeJS.ErrnoException) {
    const why =
      err.code === 'EACCES'
        ? `permission denied (ports below 1024 need privileges). Start with --port 3000, or any port above 1023`
        : err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND'
          ? `this machine has no address ${host}. Start with --host 127.0.0.1 (or 0.0.0.0 for every interface)`
          : `${err.code ?? 'error'}: ${err.message}`;
    super(`cannot listen on ${host}:${port}: ${why}.`);
    this.name = 'ListenError';
  }
}
