import { publicUser } from '../../domain/users/users.js';
import { defineRoute } from '../route.js';

export const meRoutes = [
  defineRoute({
    method: 'get',
    path: '/me',
    summary: 'Your own profile',
    tags: ['profile'],
    schemas: { responses: { 200: { $ref: 'User' } } },
    handler: ({ user }) => ({ status: 200, body: publicUser(user) }),
  }),
];
