// Baseline of the read bench: Fastify 5 that looks the presented key up in a Map and answers the
// same small JSON object as bare-read.ts, with nothing else (no logging, validation or store);
// its response schema compiles the serialiser (fast-json-stringify), as a Fastify app would.
// node bin/run-ts.js bench/baselines/fastify-read.ts META_JSON   (META_JSON: { users: [{ key, id, pin, name }] })
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import type { UsersMeta } from '../data/users.js';

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const byKey = new Map(meta.users.map((u) => [u.key, { id: u.id, display_name: u.name, pin_code: u.pin }]));

const app = Fastify({ logger: false });
const user = {
  type: 'object',
  properties: { id: { type: 'string' }, display_name: { type: 'string' }, pin_code: { type: 'string' } },
  required: ['id', 'display_name', 'pin_code'],
};
const refused = { type: 'object', properties: { error: { type: 'object', additionalProperties: true } } };
app.get('/api/v1/me', { schema: { response: { 200: user, 401: refused } } }, async (req, reply) => {
  const found = byKey.get((req.headers['x-api-key'] as string | undefined) ?? '');
  if (!found) return reply.code(401).send({ error: { code: 'unauthorized', message: 'no such key' } });
  return found;
});

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
