import { conversationFor, listConversations, openConversation, toConversation } from '../../domain/messaging/conversations.js';
import { listMessages, toMessage } from '../../domain/messaging/messages.js';
import { sendDirect, sendToConversation } from '../../domain/messaging/send.js';
import { defineRoute, type RouteDef } from '../route.js';
import { idParams, limitQuery } from '../schemas.js';

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

const content = { type: 'string', minLength: 1, description: 'non-empty after trimming; at most messaging.max_length (4000) code points' } as const;

export const messagingRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/messages/send',
    summary: 'Send a direct message by PIN (creates the direct conversation if none exists)',
    tags: ['messaging'],
    buckets: ['messages'],
    write: true,
    schemas: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['recipient_pin', 'content'],
        properties: { recipient_pin: { $ref: 'Pin' }, content },
      },
      responses: { 201: { $ref: 'Message' } },
    },
    errors: ['user_not_found', 'cannot_target_self'],
    handler: ({ tx, env, user, body }) => {
      const m = sendDirect(tx, env, user, body);
      return { status: 201, body: toMessage(tx, m) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations',
    etag: true,
    summary: 'Your conversations, most recent activity first, each with its last message',
    tags: ['messaging'],
    schemas: {
      responses: {
        200: { type: 'object', additionalProperties: false, required: ['conversations'], properties: { conversations: { type: 'array', items: conversationSchema } } },
      },
    },
    handler: ({ db, user }) => ({ status: 200, body: { conversations: listConversations(db, user) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/conversations',
    summary: 'Open a direct conversation ({ participant_pin }: 200 if it exists) or create a group ({ participant_pins, name })',
    tags: ['messaging'],
    write: true,
    schemas: {
      body: {
        type: 'object',
        additionalProperties: false,
        description: 'Either { participant_pin } (direct) or { participant_pins, name } (group).',
        properties: {
          participant_pin: { $ref: 'Pin' },
          participant_pins: { type: 'array', minItems: 1, items: { $ref: 'Pin' }, description: '1 to messaging.max_group_size - 1 other users, distinct' },
          name: { type: 'string', minLength: 1, maxLength: 100 },
        },
      },
      responses: { 200: conversationSchema, 201: conversationSchema },
    },
    errors: ['user_not_found', 'cannot_target_self'],
    handler: ({ tx, env, user, body }) => {
      const { conversation, created } = openConversation(tx, env, user, body);
      return { status: created ? 201 : 200, body: toConversation(tx, conversation) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id',
    summary: 'One of your conversations',
    tags: ['messaging'],
    schemas: { params: idParams, responses: { 200: conversationSchema } },
    errors: ['conversation_not_found'],
    handler: ({ db, user, params }) => ({ status: 200, body: toConversation(db, conversationFor(db, user, params.id)) }),
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id/messages',
    etag: true,
    summary: 'Messages of a conversation, oldest first; poll with since = the timestamp last returned',
    tags: ['messaging'],
    schemas: {
      params: idParams,
      query: {
        type: 'object',
        additionalProperties: false,
        properties: {
          since: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'ms: only messages with timestamp > since' },
          limit: limitQuery(),
        },
      },
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['messages', 'timestamp', 'has_more'],
          properties: {
            messages: { type: 'array', items: { $ref: 'Message' } },
            timestamp: { type: 'integer', description: 'the last message returned, else since, else 0: pass it as since next time' },
            has_more: { type: 'boolean' },
          },
        },
      },
    },
    errors: ['conversation_not_found'],
    handler: ({ db, user, params, query }) => {
      const c = conversationFor(db, user, params.id);
      return { status: 200, body: listMessages(db, c.id, { since: query.since, limit: query.limit }) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/:id/messages',
    summary: 'Send a message to one of your conversations',
    tags: ['messaging'],
    buckets: ['messages'],
    write: true,
    schemas: {
      params: idParams,
      body: { type: 'object', additionalProperties: false, required: ['content'], properties: { content } },
      responses: { 201: { $ref: 'Message' } },
    },
    errors: ['conversation_not_found'],
    handler: ({ tx, env, user, params, body }) => {
      const m = sendToConversation(tx, env, user, params.id, body.content);
      return { status: 201, body: toMessage(tx, m) };
    },
  }),
];
