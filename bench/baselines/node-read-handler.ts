import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UsersMeta } from '../data/users.js';

/**
 * The node:http read baseline's request handler: the presented key looked up in a Map, the same
 * small JSON object answered as pinbot's `GET /api/v1/me` (bench/baselines/node-read.ts serves
 * it; bench/tools/edge-micro.ts drives it in process as the floor).
 */
export function nodeReadHandler(users: UsersMeta['users']): (req: IncomingMessage, res: ServerResponse) => void {
  const byKey = new Map(users.map((u) => [u.key, { id: u.id, display_name: u.name, pin_code: u.pin }]));
  return (req, res) => {
    const user =
      req.url === '/api/v1/me' && req.method === 'GET'
        ? byKey.get((req.headers['x-api-key'] as string | undefined) ?? '')
        : undefined;
    const body = JSON.stringify(user ?? { error: { code: 'unauthorized', message: 'no such key' } });
    res.statusCode = user ? 200 : 401;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  };
}
