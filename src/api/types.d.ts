import type { User } from '../domain/users/users.js';

declare global {
  namespace Express {
    interface Request {
      user?: User;
      /** The id of the API key the request authenticated with (middleware/auth.ts). */
      keyId?: string;
      /** The request id (middleware/request-log.ts), also sent as `X-Request-Id`. */
      id?: string;
    }
  }
}
export {};
