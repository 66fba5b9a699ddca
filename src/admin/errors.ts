import { OperatorError } from '../util/operator-error.js';

/** Which argument an error is about, and the rest of its sentence (`is required`). */
export interface ArgProblem {
  /** The argument's name, as the command takes it (`name`, `duration`). */
  arg: string;
  /** What is wrong, after the argument's name: `is required`, `is like 90s, 15m, 2h or 3d`. */
  problem: string;
}

/** An operator mistake: printed on stderr as is, exit code 1. */
export class AdminError extends OperatorError {
  /**
   * Set when the error is about one argument: each front end names it its own way (the CLI
   * `--name` or `DURATION`, the console the field's label), the rest of the sentence as is.
   */
  readonly about?: ArgProblem;

  constructor(message: string, about?: ArgProblem) {
    super(message);
    this.name = 'AdminError';
    this.about = about;
  }

  /**
   * An error about one argument, worded for the CLI (`cliName` is its flag or placeholder).
   *
   * @example throw AdminError.forArg('duration', 'DURATION', 'is like 90s, 15m, 2h or 3d')
   */
  static forArg(arg: string, cliName: string, problem: string): AdminError {
    return new AdminError(`${cliName} ${problem}`, { arg, problem });
  }

  /** The message with the argument named by `label` (a front end's own word for it), if it is about one. */
  static wordedFor(err: unknown, label: (arg: string) => string): string {
    if (err instanceof AdminError && err.about) return `${label(err.about.arg)} ${err.about.problem}`;
    return err instanceof Error ? err.message : String(err);
  }
}
