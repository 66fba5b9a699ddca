import {
  conversationFor,
  leaveConversation,
  listConversations,
  openConversation,
  toConversation,
} from '../../domain/messaging/conversations.js';
import { listMessages, toMessage } from '../../domain/messaging/messages.js';
import { sendDirect, sendToConversation } from '../../domain/messaging/send.js';
import { defineRoute, type RouteDef } from '../route.js';
import { emptyBody, idParams } from '../schemas.js';
import {
  contentSchema,
  conversationPageSchema,
  conversationSchema,
  conversationsQuery,
  messageOnly,
  messagePageSchema,
  messagesQuery,
  openConversationBody,
} from './schemas.js';

export { conversationSchema } from './schemas.js';

const tags = ['messaging'];

export const messagingRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/messages/send',
    summary: 'Send a direct message by PIN (creates the direct conversation if none exists)',
    description:
      'Sends a message to a user by PIN, in the direct conversation of the two of ' +
      'you, which is created if none exists. Content is 1 to messaging.max_length ' +
      'code points, not only whitespace.',
    tags,
    buckets: ['messages'],
    write: true,
    schemas: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['recipient_pin', 'content'],
        properties: { recipient_pin: { $ref: 'Pin' }, content: contentSchema },
      },
      responses: { 201: { $ref: 'Message' } },
    },
    errors: ['user_not_found', 'cannot_target_self', 'quota_exceeded'],
    handler: ({ tx, env, user, body }) => {
      const m = sendDirect(tx, env, user, body);
      return { status: 201, body: toMessage(tx, m) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations',
    etag: true,
    summary: 'Your conversations, most recent activity first, each with its last message (paged)',
    description:
      'Your conversations, most recent activity first, each with its participants and ' +
      'last message. Paged (pinbot extension): limit (default 50) and before = ' +
      'next_before of the previous page; has_more tells whether more follow. A ' +
      'conversation that moves to the top while you page is not repeated in the pages ' +
      'after your cursor; poll the first page to see what changed.',
    tags,
    schemas: { query: conversationsQuery, responses: { 200: conversationPageSchema } },
    handler: ({ db, user, query }) => ({
      status: 200,
      body: listConversations(db, user, { limit: query.limit, before: query.before }),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/conversations',
    summary:
      'Open a direct conversation ({ participant_pin }: 200 if it exists) or create a ' +
      'group ({ participant_pins, name })',
    description:
      'Either { participant_pin }: the direct conversation with that user, 200 if it ' +
      'exists or 201 when new. Or { participant_pins, name }: a new group of you and ' +
      '1 to messaging.max_group_size - 1 others (201), counted in the groups rate ' +
      'bucket. Repeated PINs or a wrong combination of fields: 400 validation_failed.',
    tags,
    // Creating a group counts in its own bucket; opening a direct conversation does not.
    buckets: ['groups'],
    bucketWhen: { groups: (body) => typeof body === 'object' && body !== null && 'participant_pins' in body },
    write: true,
    schemas: { body: openConversationBody, responses: { 200: conversationSchema, 201: conversationSchema } },
    errors: ['user_not_found', 'cannot_target_self', 'quota_exceeded'],
    handler: ({ tx, env, user, body }) => {
      const { conversation, created } = openConversation(tx, env, user, body);
      return { status: created ? 201 : 200, body: toConversation(tx, conversation) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id',
    summary: 'One of your conversations',
    description:
      'One of your conversations. A conversation you are not in does not exist for you: 404 conversation_not_found.',
    tags,
    schemas: { params: idParams, responses: { 200: conversationSchema } },
    errors: ['conversation_not_found'],
    handler: ({ db, user, params }) => ({
      status: 200,
      body: toConversation(db, conversationFor(db, user, params.id)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/:id/leave',
    summary: 'Leave a group (extension): it goes on without you and no longer exists for you',
    description:
      'Leaves a group you are in (pinbot extension). The group and its messages go on ' +
      'without you; it no longer exists for you (404), and nobody can add you back to ' +
      'it. Takes no body. A direct conversation cannot be left: 400 ' +
      'cannot_leave_direct.',
    tags,
    write: true,
    schemas: { params: idParams, body: emptyBody, responses: { 200: messageOnly } },
    errors: ['conversation_not_found', 'cannot_leave_direct'],
    handler: ({ tx, user, params }) => {
      const c = leaveConversation(tx, user, params.id);
      return { status: 200, body: { message: `You left the group ${c.name}.` } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id/messages',
    etag: true,
    summary: 'Messages of a conversation, oldest first; poll with since = the timestamp last returned',
    description:
      'Messages oldest first. With since: the oldest limit messages with timestamp > ' +
      'since, and has_more when newer ones remain; without: the newest limit ' +
      'messages. timestamp is that of the last message returned (else since, else 0): ' +
      'polling with it never misses or repeats a message, as timestamps strictly ' +
      'increase within a conversation.',
    tags,
    schemas: { params: idParams, query: messagesQuery, responses: { 200: messagePageSchema } },
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
    description:
      'Sends a message to one of your conversations. Content is 1 to ' +
      'messaging.max_length code points, not only whitespace.',
    tags,
    buckets: ['messages'],
    write: true,
    schemas: {
      params: idParams,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['content'],
        properties: { content: contentSchema },
      },
      responses: { 201: { $ref: 'Message' } },
    },
    errors: ['conversation_not_found', 'quota_exceeded'],
    handler: ({ tx, env, user, params, body }) => {
      const m = sendToConversation(tx, env, user, params.id, body.content);
      return { status: 201, body: toMessage(tx, m) };
    },
  }),
];
