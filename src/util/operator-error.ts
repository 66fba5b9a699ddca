/**
 * An error an operator can act on from its message alone: the CLI prints its message as one
 * line, without a stack, and exits 1. Every layer's operator errors extend it (a bad config, a
 * locked data directory, a port in use, a damaged store, an admin command refused, …), so the
 * CLI keeps no list of them.
 *
 * @example throw new ConfigError('config.yaml:3:5: store.driver must be file or postgres')
 */
export class OperatorError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
