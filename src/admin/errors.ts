import { OperatorError } from '../util/operator-error.js';
/** An operator mistake: printed on stderr as is, exit code 1. */
export class AdminError extends OperatorError {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}
