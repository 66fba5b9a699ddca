import { publicUser } from '../../domain/users/users.js';
import { defineRoute } from '../route.js';

export const meRoutes = [
  defineRoute({
    method: 'get',
    path: '/me',
    summary: 'Your own profile',
    description: "The profile of the key's user: id, display name and PIN (share the PIN so others can reach you).",
    tags: ['profile'],
    schemas: { responses: { 200: { $ref: 'User' } } },
    handler: ({ user }) => ({ status: 200, body: publicUser(user) }),
  }),
];
