import { fromConfig } from './config-bound.js';

/**
 * Shared JSON Schemas, registered with ajv by `$id` and referenced as `{ $ref: 'User' }`.
 * The OpenAPI document lists them under components/schemas.
 */
export const sharedSchemas = {
  Pin: {
    $id: 'Pin',
    type: 'string',
    minLength: 1,
    maxLength: 16,
    description: '6 characters A-Z 0-9; trimmed and upper-cased before lookup',
  },
  Amount: {
    $id: 'Amount',
    type: 'number',
    description: '> 0, at most 2 decimal places, at most wallet.max_transfer; otherwise 400 invalid_amount',
    // The money rules answer 400 invalid_amount (not validation_failed), so they stay in the
    // domain; the document states them. multipleOf 0.01: check with a decimal-safe validator
    // (0.07 / 0.01 is 7.000000000000001 in floating point).
    'x-openapi': {
      exclusiveMinimum: 0,
      maximum: fromConfig('wallet.max_transfer', (c) => c.wallet.max_transfer),
      multipleOf: 0.01,
    },
  },
  Id: { $id: 'Id', type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z]+_[0-9a-z]+$' },
  User: {
    $id: 'User',
    type: 'object',
    additionalProperties: false,
    required: ['id', 'display_name', 'pin_code'],
    properties: { id: { type: 'string' }, display_name: { type: 'string' }, pin_code: { type: 'string' } },
  },
  Error: {
    $id: 'Error',
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          details: {
            type: 'array',
            items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
          },
          retry_after: {
            type: 'integer',
            format: 'int32',
            minimum: 1,
            maximum: 2_147_483_647,
            description: '429 only: seconds to wait (as Retry-After)',
          },
        },
      },
    },
  },
  Message: {
    $id: 'Message',
    type: 'object',
    additionalProperties: false,
    required: ['id', 'conversation_id', 'content', 'sender', 'timestamp', 'created_at'],
    properties: {
      id: { type: 'string' },
      conversation_id: { type: 'string' },
      content: { type: 'string' },
      sender: { $ref: 'User' },
      timestamp: {
        type: 'integer',
        format: 'int64',
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'ms since the Unix epoch; strictly increasing within a conversation',
      },
      created_at: { type: 'string' },
    },
  },
} as const;

/** A body schema for POST routes that take no fields (accept, decline). */
export const emptyBody = { type: 'object', additionalProperties: false, properties: {} } as const;

/**
 * A params schema for routes with one `:id`. Ids are opaque (API.md): the server does not check
 * their shape at the door, so an id of any length or character that names nothing the caller
 * can see is the route's 404 (`transaction_not_found`, …), never a 400.
 */
export const idParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: {
      type: 'string',
      description:
        'an opaque id; one that names nothing you can see (whatever its length or ' +
        "characters) is 404 with the resource's not-found code",
    },
  },
} as const;

/** Query of list endpoints: `limit` (1–200). */
export const limitQuery = (dflt = 50) =>
  ({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 200,
    default: dflt,
    description: `page size: 1–200, default ${dflt}`,
  }) as const;
