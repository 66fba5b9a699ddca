/** JSON Schemas of the messaging routes (requests and responses), beside their handlers. */
import { fromConfig } from '../config-bound.js';
import { limitQuery } from '../schemas.js';

/** The conversation object (API.md "Messaging"). */
export const conversationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'name', 'participants', 'last_message', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    type: { enum: ['direct', 'group'] },
    name: { type: ['string', 'null'], description: 'null for direct conversations' },
    participants: { type: 'array', items: { $ref: 'User' } },
    last_message: { anyOf: [{ $ref: 'Message' }, { type: 'null' }] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time', description: 'last activity' },
  },
} as const;

/** Message text: the bound is the server's `messaging.max_length`, in code points (as ajv counts). */
export const contentSchema = {
  type: 'string',
  minLength: 1,
  maxLength: fromConfig('messaging.max_length', (c) => c.messaging.max_length),
  description: 'non-empty after trimming; at most messaging.max_length Unicode code points',
} as const;

const groupPins = {
  type: 'array',
  minItems: 1,
  maxItems: fromConfig('messaging.max_group_size - 1', (c) => c.messaging.max_group_size - 1),
  items: { $ref: 'Pin' },
  description:
    '1 to messaging.max_group_size - 1 other users, each once (PINs are compared after trimming and upper-casing)',
  // Repeats are refused by the domain, which also sees `abc123` and `ABC123` as one PIN.
  'x-openapi': { uniqueItems: true },
} as const;
const groupName = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: '1–100 characters, not only whitespace',
} as const;

/** `POST /conversations`: one of two shapes, told apart (with clear messages) by the domain. */
export const openConversationBody = {
  type: 'object',
  additionalProperties: false,
  description: 'Either { participant_pin } (direct) or { participant_pins, name } (group).',
  properties: { participant_pin: { $ref: 'Pin' }, participant_pins: groupPins, name: groupName },
  'x-openapi': {
    oneOf: [
      {
        title: 'Direct',
        type: 'object',
        additionalProperties: false,
        required: ['participant_pin'],
        properties: { participant_pin: { $ref: 'Pin' } },
      },
      {
        title: 'Group',
        type: 'object',
        additionalProperties: false,
        required: ['participant_pins', 'name'],
        properties: { participant_pins: groupPins, name: groupName },
      },
    ],
  },
} as const;

export const conversationsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitQuery(50),
    before: {
      type: 'string',
      maxLength: 80,
      pattern: '^[0-9]{1,16}\\.cnv_[0-9a-z]{1,40}$',
      description: 'next_before of the previous page: return the conversations after it',
    },
  },
} as const;

export const conversationPageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['conversations', 'has_more', 'next_before'],
  properties: {
    conversations: { type: 'array', items: conversationSchema },
    has_more: { type: 'boolean', description: 'more conversations follow: ask again with before = next_before' },
    next_before: { type: ['string', 'null'], description: 'the cursor of the next page; null on the last one' },
  },
} as const;

/** A `since` query parameter: a timestamp in ms, only messages written after it. */
export const sinceQuery = <D extends string>(description: D) =>
  ({ type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description }) as const;

export const messagesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    since: sinceQuery('a timestamp (ms): only messages with timestamp > since'),
    limit: limitQuery(),
  },
} as const;

export const messagePageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['messages', 'timestamp', 'has_more'],
  properties: {
    messages: { type: 'array', items: { $ref: 'Message' } },
    timestamp: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'the last message returned, else since, else 0: pass it as since next time',
    },
    has_more: { type: 'boolean' },
  },
} as const;

export const messageOnly = {
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: { message: { type: 'string' } },
} as const;
