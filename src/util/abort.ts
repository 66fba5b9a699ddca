/** Thrown by a sleep or wait when its AbortSignal aborts. */
export class AbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortError';
  }
}
