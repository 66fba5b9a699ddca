import {
  answerIntroduction,
  createIntroduction,
  listIntroductions,
  pendingIntroductions,
  toIntroduction,
} from '../../domain/introductions/introductions.js';
import { fromConfig } from '../config-bound.js';
import { defineRoute, type RouteDef } from '../route.js';
import { emptyBody, idParams } from '../schemas.js';

/** The introduction object (API.md "Introductions"). */
export const introductionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'introducer', 'participants', 'message', 'status', 'created_at'],
  properties: {
    id: { type: 'string' },
    introducer: { $ref: 'User' },
    participants: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'display_name', 'pin_code', 'response'],
        properties: {
          id: { type: 'string' },
          display_name: { type: 'string' },
          pin_code: { type: 'string' },
          response: { enum: ['pending', 'accepted', 'declined'] },
        },
      },
    },
    message: { type: 'string' },
    status: { enum: ['pending', 'accepted', 'declined'] },
    conversation_id: { type: 'string', description: 'absent until every participant has accepted' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const listSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['introductions'],
  properties: { introductions: { type: 'array', items: introductionSchema } },
} as const;

const answerErrors = ['introduction_not_found', 'forbidden', 'introduction_not_pending'];

export const introductionRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/introductions',
    summary: 'Introduce two or more people to each other by PIN',
    description:
      'Introduces 2 to messaging.max_group_size other users to each other, with an ' +
      'optional message (≤ 1,000 characters). Each of them accepts or declines; when ' +
      'the last one accepts, a conversation among them is opened (direct for two, ' +
      'reusing an existing one; group for more). Repeated PINs: 400 ' +
      'validation_failed; an unknown PIN: 404 user_not_found; your own: 400 ' +
      'cannot_target_self.',
    tags: ['introductions'],
    buckets: ['intros'],
    write: true,
    schemas: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['participant_pins'],
        properties: {
          participant_pins: {
            type: 'array',
            minItems: 2,
            maxItems: fromConfig('messaging.max_group_size', (c) => c.messaging.max_group_size),
            items: { $ref: 'Pin' },
            description: '2 to messaging.max_group_size distinct PINs of other users',
            // Repeats are refused by the domain, which also sees `abc123` and `ABC123` as one PIN.
            'x-openapi': { uniqueItems: true },
          },
          message: { type: 'string', maxLength: 1000 },
        },
      },
      responses: { 201: introductionSchema },
    },
    errors: ['user_not_found', 'cannot_target_self', 'quota_exceeded'],
    handler: ({ tx, env, user, body }) => ({
      status: 201,
      body: toIntroduction(tx, createIntroduction(tx, env, user, body)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/introductions',
    etag: true,
    summary: 'Introductions you made or are in, newest first',
    description:
      "Introductions you made or are a participant of, newest first, each with every participant's response.",
    tags: ['introductions'],
    schemas: { responses: { 200: listSchema } },
    handler: ({ db, user }) => ({ status: 200, body: { introductions: listIntroductions(db, user) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/introductions/pending',
    etag: true,
    summary: 'Pending introductions awaiting your answer, newest first',
    description: 'Introductions still pending where your own response is pending, newest first.',
    tags: ['introductions'],
    schemas: { responses: { 200: listSchema } },
    handler: ({ db, user }) => ({ status: 200, body: { introductions: pendingIntroductions(db, user) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/introductions/:id/accept',
    summary: 'Accept an introduction; the last acceptance creates the conversation',
    description:
      'Accepts an introduction you are a participant of. Takes no body. Answers its ' +
      'status: pending until the last participant accepts, then accepted with the ' +
      'conversation_id of their conversation. The introducer gets 403 forbidden; ' +
      'anyone else 404; already answered or ended: 409 introduction_not_pending.',
    tags: ['introductions'],
    write: true,
    schemas: {
      params: idParams,
      body: emptyBody,
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'status'],
          properties: {
            id: { type: 'string' },
            status: { enum: ['pending', 'accepted'] },
            conversation_id: { type: 'string', description: 'present once every participant has accepted' },
          },
        },
      },
    },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => ({
      status: 200,
      body: answerIntroduction(tx, env, user, params.id, 'accepted'),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/introductions/:id/decline',
    summary: 'Decline an introduction (one decline ends it)',
    description:
      'Declines an introduction you are a participant of: one decline ends it for ' +
      'everyone. Takes no body. The introducer gets 403 forbidden; anyone else 404; ' +
      'already answered or ended: 409 introduction_not_pending.',
    tags: ['introductions'],
    write: true,
    schemas: {
      params: idParams,
      body: emptyBody,
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'status'],
          properties: { id: { type: 'string' }, status: { const: 'declined' } },
        },
      },
    },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => ({
      status: 200,
      body: answerIntroduction(tx, env, user, params.id, 'declined'),
    }),
  }),
];
