/**
 * The domain's error catalogue: every rule the domain can refuse, with a message that says what
 * to do next. The domain knows no HTTP: the API maps each code to a status in one place
 * (`api/errors.ts`), the admin socket and the CLI map it their way.
 *
 * @example throw new DomainError('insufficient_funds', 'Your balance is 3.00, less than 5.00.');
 */
export const DOMAIN_ERRORS = {
  validation_failed: 'The request does not match the schema of this endpoint; see details for each field.',
  invalid_amount:
    'amount must be a number greater than 0 with at most 2 decimal places, and no more than the maximum transfer.',
  insufficient_funds: 'Your balance is lower than the amount. Check GET /api/v1/wallet/balance.',
  cannot_target_self: 'You cannot target your own PIN here. Use the PIN of another user.',
  forbidden: 'You are a party to this resource but may not perform this action on it.',
  user_not_found: 'No user has this PIN. Check the PIN (6 characters, A-Z and 0-9).',
  transaction_not_found: 'No transaction with this id is visible to you.',
  conversation_not_found: 'No conversation with this id is visible to you.',
  introduction_not_found: 'No introduction with this id is visible to you.',
  contact_request_not_found: 'No contact request with this id is addressed to you.',
  contact_not_found: 'No contact with this id is in your contact list.',
  transaction_not_pending: 'This transaction is no longer pending: it was already accepted or declined.',
  introduction_not_pending: 'This introduction is no longer pending for you: it was already answered or has ended.',
  contact_request_not_pending: 'This contact request is no longer pending.',
  already_contacts: 'You are already contacts with this user.',
  request_exists: 'You already sent a contact request to this user; wait for their answer.',
  cannot_leave_direct: 'A direct conversation cannot be left; only groups can. Stop writing to it, or ignore it.',
  quota_exceeded: 'This would keep more than one user may keep in the store (config.yaml quotas); nothing was written.',
} as const satisfies Record<string, string>;

export type DomainErrorCode = keyof typeof DOMAIN_ERRORS;

/** One bad field of a refused input: its JSON path and what is wrong with it. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** A rule of the domain refused the operation; `code` is from DOMAIN_ERRORS. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message ?? DOMAIN_ERRORS[code]);
    this.name = 'DomainError';
  }
}
