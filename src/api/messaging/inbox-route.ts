/** `GET /messages` (extension): new messages across all of the caller's conversations, by cursor. */
import { listInbox } from '../../domain/messaging/inbox.js';
import { defineRoute, type RouteDef } from '../route.js';
import { limitQuery } from '../schemas.js';
import { conversationSchema, sinceQuery } from './schemas.js';

const inboxQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    since: sinceQuery('the first read: only messages with timestamp > since (ms); default 0, every message'),
    after: {
      type: 'string',
      maxLength: 80,
      pattern: '^[0-9]{1,16}\\.(msg_[0-9a-z]{1,40})?$',
      description: 'the next_after of the previous answer: only messages written after that page',
    },
    limit: limitQuery(50),
  },
} as const;

const inboxPageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['messages', 'conversations', 'next_after', 'has_more'],
  properties: {
    messages: { type: 'array', items: { $ref: 'Message' }, description: 'in the order they were written' },
    conversations: {
      type: 'array',
      items: conversationSchema,
      description: 'the conversations of these messages, each once',
    },
    next_after: { type: 'string', description: 'pass as after next time (opaque)' },
    has_more: { type: 'boolean', description: 'more new messages follow: ask again with after = next_after' },
  },
} as const;

export const inboxRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/messages',
    etag: true,
    summary: 'New messages across all your conversations, in the order they were written (extension)',
    description:
      'New messages across all your conversations (pinbot extension), oldest first in ' +
      'the order they were written, with the conversations they are in. The first ' +
      'read gives since (a timestamp: only messages with timestamp > since; default ' +
      '0); each next one gives after = the next_after of the answer before: a client ' +
      'that always does never misses and never repeats a message, whichever ' +
      'conversation it is in. has_more: more follow at once. One request instead of ' +
      'one per conversation (a bot in 1,000 conversations). since and after together: ' +
      '400 validation_failed.',
    tags: ['messaging'],
    schemas: { query: inboxQuery, responses: { 200: inboxPageSchema } },
    handler: ({ db, user, query }) => ({
      status: 200,
      body: listInbox(db, user, { since: query.since, after: query.after, limit: query.limit }),
    }),
  }),
];
