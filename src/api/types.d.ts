import type { User } from '../domain/users/users.js';

declare global {
  namespace Express {
    interface Request {
      user?: User;
    }
  }
}
export {};
