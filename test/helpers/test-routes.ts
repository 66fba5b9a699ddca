import { ApiError } from '../../src/api/errors.js';
import { defineRoute, type RouteDef } from '../../src/api/route.js';
import { defineCollection } from '../../src/store/core/types.js';
import { newId } from '../../src/util/ids.js';

/** A collection only the test routes use. */
export interface Note {
  readonly id: string;
  readonly user_id: string;
  readonly text: string;
}
export const Notes = defineCollection<Note>({ name: 'test_notes', multi: { user: (n) => n.user_id } });

const noteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 200_000 },
    count: { type: 'integer', minimum: 1, default: 1 },
  },
} as const;

/**
 * Tiny routes for testing the framework (idempotency, rate limits, errors) without any real
 * area: `POST /test/notes` writes (`text: "refuse"` is a business refusal, `"boom"` a bug),
 * `GET /test/notes` reads, `GET /test/boom` is a bug, `POST /test/messages` counts against the
 * messages bucket.
 */
export const testRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/test/notes',
    summary: 'Write a note (test only)',
    tags: ['test'],
    write: true,
    schemas: { body: noteBody, responses: { 201: { type: 'object' } } },
    handler: ({ tx, user, body }) => {
      if (body.text === 'refuse') throw new ApiError('insufficient_funds');
      const notes = [];
      for (let i = 0; i < body.count; i++) {
        notes.push(tx.col(Notes).insert({ id: newId('note'), user_id: user.id, text: body.text }));
        if (body.text === 'boom') throw new Error('secret detail of a bug');
      }
      return { status: 201, body: { notes, total: tx.col(Notes).ids('user', user.id).length } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/test/notes',
    summary: 'Read notes (test only)',
    tags: ['test'],
    schemas: { responses: { 200: { type: 'object' } } },
    handler: ({ db, user }) => ({ status: 200, body: { total: db.col(Notes).ids('user', user.id).length } }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/boom',
    summary: 'A bug (test only)',
    tags: ['test'],
    schemas: { responses: { 200: { type: 'object' } } },
    handler: () => {
      throw new Error('secret detail of a bug');
    },
  }),
  defineRoute({
    method: 'post',
    path: '/test/messages',
    summary: 'Counts against the messages bucket (test only)',
    tags: ['test'],
    buckets: ['messages'],
    write: true,
    schemas: { body: noteBody, responses: { 201: { type: 'object' } } },
    handler: ({ tx, user, body }) => ({
      status: 201,
      body: { note: tx.col(Notes).insert({ id: newId('note'), user_id: user.id, text: body.text }) },
    }),
  }),
];
