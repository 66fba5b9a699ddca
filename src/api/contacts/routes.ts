import {
  answerContactRequest,
  pendingContactRequests,
  requestContact,
  toContactRequest,
} from '../../domain/contacts/contact-requests.js';
import { checkContact, deleteContact, listContacts } from '../../domain/contacts/contacts.js';
import { defineRoute, type RouteDef } from '../route.js';
import { emptyBody, idParams } from '../schemas.js';

/** A contact list entry (API.md "Contacts"): `id` is what DELETE /contacts/:id takes. */
const contactEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'contact', 'created_at'],
  properties: {
    id: { type: 'string' },
    contact: { $ref: 'User' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const messageOnly = {
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: { message: { type: 'string' } },
} as const;
const answerErrors = ['contact_request_not_found', 'forbidden', 'contact_request_not_pending'];

export const contactRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/contacts',
    etag: true,
    summary: 'Your contacts, newest first',
    description:
      "Your contact list, newest first. Each entry's id (con_…) is what DELETE " +
      '/contacts/{id} takes; contact is the other user.',
    tags: ['contacts'],
    schemas: {
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['contacts'],
          properties: { contacts: { type: 'array', items: contactEntrySchema } },
        },
      },
    },
    handler: ({ db, user }) => ({ status: 200, body: { contacts: listContacts(db, user) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/request',
    summary: 'Ask a user by PIN to become a contact (if they already asked you, you become contacts at once)',
    description:
      'Sends a contact request to the user with this PIN. If they already asked you, ' +
      'you become contacts at once (201, status accepted). Already contacts: 409 ' +
      'already_contacts; a pending request from you exists: 409 request_exists.',
    tags: ['contacts'],
    buckets: ['contacts'],
    write: true,
    schemas: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['pin_code'],
        properties: { pin_code: { $ref: 'Pin' } },
      },
      responses: {
        201: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'requester', 'recipient', 'status', 'created_at'],
          properties: {
            id: { type: 'string' },
            requester: { $ref: 'User' },
            recipient: { $ref: 'User' },
            status: {
              enum: ['pending', 'accepted'],
              description: 'accepted when the other user had already asked you',
            },
            created_at: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
    errors: ['user_not_found', 'cannot_target_self', 'already_contacts', 'request_exists'],
    handler: ({ tx, env, user, body }) => ({
      status: 201,
      body: toContactRequest(tx, requestContact(tx, env, user, body.pin_code)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/contacts/requests/pending',
    etag: true,
    summary: 'Contact requests awaiting your answer, newest first',
    description: 'Contact requests addressed to you that you have not answered, newest first.',
    tags: ['contacts'],
    schemas: {
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['requests'],
          properties: {
            requests: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['id', 'requester', 'created_at'],
                properties: {
                  id: { type: 'string' },
                  requester: { $ref: 'User' },
                  created_at: { type: 'string', format: 'date-time' },
                },
              },
            },
          },
        },
      },
    },
    handler: ({ db, user }) => ({ status: 200, body: { requests: pendingContactRequests(db, user) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/requests/:id/accept',
    summary: 'Accept a contact request addressed to you',
    description:
      'Accepts a contact request addressed to you: you become contacts; the answer ' +
      'has the new entry of your list. Takes no body. The requester gets 403 ' +
      'forbidden; anyone else 404; an answered request 409 ' +
      'contact_request_not_pending.',
    tags: ['contacts'],
    write: true,
    schemas: {
      params: idParams,
      body: emptyBody,
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['message', 'contact'],
          properties: { message: { type: 'string' }, contact: contactEntrySchema },
        },
      },
    },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => ({
      status: 200,
      body: answerContactRequest(tx, env, user, params.id, 'accepted'),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/requests/:id/decline',
    summary: 'Decline a contact request addressed to you',
    description:
      'Declines a contact request addressed to you. Takes no body. The requester gets ' +
      '403 forbidden; anyone else 404; an answered request 409 ' +
      'contact_request_not_pending.',
    tags: ['contacts'],
    write: true,
    schemas: { params: idParams, body: emptyBody, responses: { 200: messageOnly } },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => ({
      status: 200,
      body: answerContactRequest(tx, env, user, params.id, 'declined'),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/contacts/:id',
    summary: 'Remove a contact (for both of you)',
    description: "Removes a contact, for both of you. The id is the entry's id from GET /contacts.",
    tags: ['contacts'],
    write: true,
    schemas: { params: idParams, responses: { 200: messageOnly } },
    errors: ['contact_not_found'],
    handler: ({ tx, user, params }) => ({ status: 200, body: deleteContact(tx, user, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/contacts/check/:pin',
    summary: 'Whether the user with this PIN is one of your contacts',
    description:
      'Whether the user with this PIN is one of your contacts, with their id and ' +
      'name. An unknown PIN is 404 user_not_found.',
    tags: ['contacts'],
    schemas: {
      params: { type: 'object', additionalProperties: false, required: ['pin'], properties: { pin: { $ref: 'Pin' } } },
      responses: {
        200: {
          type: 'object',
          additionalProperties: false,
          required: ['is_contact', 'user'],
          properties: {
            is_contact: { type: 'boolean' },
            user: {
              type: 'object',
              additionalProperties: false,
              required: ['id', 'display_name'],
              properties: { id: { type: 'string' }, display_name: { type: 'string' } },
            },
          },
        },
      },
    },
    errors: ['user_not_found', 'cannot_target_self'],
    handler: ({ db, user, params }) => ({ status: 200, body: checkContact(db, user, params.pin) }),
  }),
];
