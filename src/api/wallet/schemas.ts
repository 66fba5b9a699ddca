/** JSON Schemas of the wallet routes (requests and responses), beside their handlers. */
import { limitQuery } from '../schemas.js';

const date = { type: 'string', format: 'date' } as const;
const nullableUser = { anyOf: [{ $ref: 'User' }, { type: 'null' }] } as const;

/** API.md "Transaction object". */
export const transactionSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'type',
    'amount',
    'status',
    'direction',
    'note',
    'sender',
    'recipient',
    'sender_pin',
    'recipient_pin',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string' },
    type: { enum: ['transfer', 'ubi', 'grant'] },
    amount: { type: 'number', exclusiveMinimum: 0 },
    status: { enum: ['pending', 'accepted', 'declined'] },
    direction: { enum: ['sent', 'received'] },
    note: { type: 'string' },
    sender: nullableUser,
    recipient: { $ref: 'User' },
    sender_pin: { type: ['string', 'null'] },
    recipient_pin: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** `{ message, transaction }` of send, accept and decline. */
export const transactionResult = {
  type: 'object',
  additionalProperties: false,
  required: ['message', 'transaction'],
  properties: { message: { type: 'string' }, transaction: transactionSchema },
} as const;

export const balanceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['balance', 'subscription_days', 'is_subscribed', 'next_shmita'],
  properties: {
    balance: { type: 'number', minimum: 0 },
    subscription_days: { type: 'number', minimum: 0, description: 'days left until the end of end_date, 1 decimal' },
    is_subscribed: { type: 'boolean' },
    next_shmita: { ...date, description: '29 Elul of the next (or current) Shmita year' },
  },
} as const;

export const subscriptionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['is_subscribed', 'status', 'start_date', 'end_date'],
  properties: {
    is_subscribed: { type: 'boolean' },
    status: { enum: ['active', 'expired', 'none'] },
    start_date: { anyOf: [date, { type: 'null' }] },
    end_date: { anyOf: [date, { type: 'null' }] },
  },
} as const;

export const pendingSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pending_transactions'],
  properties: {
    pending_transactions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'amount', 'sender_pin', 'sender', 'note', 'created_at'],
        properties: {
          id: { type: 'string' },
          amount: { type: 'number' },
          sender_pin: { type: 'string' },
          sender: { $ref: 'User' },
          note: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;

export const pageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['transactions', 'has_more'],
  properties: { transactions: { type: 'array', items: transactionSchema }, has_more: { type: 'boolean' } },
} as const;

export const sendBody = {
  type: 'object',
  additionalProperties: false,
  required: ['recipient_pin', 'amount'],
  properties: {
    recipient_pin: { $ref: 'Pin' },
    // Only the type is checked here; the money rules answer 400 invalid_amount (API.md "Money").
    amount: { $ref: 'Amount' },
    note: { type: 'string', maxLength: 500, default: '' },
  },
} as const;

export const transactionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitQuery(50),
    before: {
      type: 'string',
      pattern: '^txn_[0-9a-z]+$',
      maxLength: 64,
      description: 'a transaction id: return older ones',
    },
  },
} as const;
