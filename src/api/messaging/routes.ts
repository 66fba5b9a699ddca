import { conversationFor, leaveConversation, listConversations, openConversation, toConversation } from '../../domain/messaging/conversations.js';
import { listMessages, toMessage } from '../../domain/messaging/messages.js';
import { sendDirect, sendToConversation } from '../../domain/messaging/send.js';
import { defineRoute, type RouteDef } from '../route.js';
import { emptyBody, idParams } from '../schemas.js';
import { contentSchema, conversationPageSchema, conversationSchema, conversationsQuery, messageOnly, messagePageSchema, messagesQuery, openConversationBody } from './schemas.js';

export { conversationSchema } from './schemas.js';

const tags = ['messaging'];

export const messagingRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/messages/send',
    summary: 'Send a direct message by PIN (creates the direct conversation if none exists)',
    tags,
    buckets: ['messages'],
    write: true,
    schemas: {
      body: { type: 'object', additionalProperties: false, required: ['recipient_pin', 'content'], properties: { recipient_pin: { $ref: 'Pin' }, content: contentSchema } },
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
    summary: 'Your conversations, most recent activity first, each with its last message (paged)',
    tags,
    schemas: { query: conversationsQuery, responses: { 200: conversationPageSchema } },
    handler: ({ db, user, query }) => ({ status: 200, body: listConversations(db, user, { limit: query.limit, before: query.before }) }),
  }),
  defineRoute({
    method: 'post',
    path: '/conversations',
    summary: 'Open a direct conversation ({ participant_pin }: 200 if it exists) or create a group ({ participant_pins, name })',
    tags,
    // Creating a group counts in its own bucket; opening a direct conversation does not.
    buckets: ['groups'],
    bucketWhen: { groups: (body) => typeof body === 'object' && body !== null && 'participant_pins' in body },
    write: true,
    schemas: { body: openConversationBody, responses: { 200: conversationSchema, 201: conversationSchema } },
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
    tags,
    schemas: { params: idParams, responses: { 200: conversationSchema } },
    errors: ['conversation_not_found'],
    handler: ({ db, user, params }) => ({ status: 200, body: toConversation(db, conversationFor(db, user, params.id)) }),
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/:id/leave',
    summary: 'Leave a group (extension): it goes on without you and no longer exists for you',
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
    summary: 'Messages of a conversation, oldest first; poll with since = the timestamp last returned',
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
    tags,
    buckets: ['messages'],
    write: true,
    schemas: { params: idParams, body: { type: 'object', additionalProperties: false, required: ['content'], properties: { content: contentSchema } }, responses: { 201: { $ref: 'Message' } } },
    errors: ['conversation_not_found'],
    handler: ({ tx, env, user, params, body }) => {
      const m = sendToConversation(tx, env, user, params.id, body.content);
      return { status: 201, body: toMessage(tx, m) };
    },
  }),
];
