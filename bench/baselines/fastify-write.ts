// Baseline of the write bench: Fastify 5 parsing the JSON body, looking the key up in a Map and
// appending a 200-byte line to a file with the same group-commit fdatasync as bare-write.ts,
// answering after the fdatasync that covers it (group-commit.ts).
// node bin/run-ts.js bench/baselines/fastify-write.ts META_JSON FILE
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import type { UsersMeta } from '../data/users.js';
import { groupCommit, journalLine } from './group-commit.js';

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const byKey = new Map(meta.users.map((u) => [u.key, u.id]));
const journal = await groupCommit(process.argv[3]!);
let seq = 0;

const app = Fastify({ logger: false, bodyLimit: 100 * 1024 });
const created = {
  type: 'object',
  properties: { id: { type: 'integer' }, conversation_id: { type: 'string' }, content: { type: 'string' } },
};
app.post<{ Params: { id: string }; Body: { content?: unknown } }>(
  '/api/v1/conversations/:id/messages',
  { schema: { response: { 201: created } } },
  async (req, reply) => {
    const userId = byKey.get((req.headers['x-api-key'] as string | undefined) ?? '');
    if (!userId) return reply.code(401).send({ error: { code: 'unauthorized', message: 'no such key' } });
    const content = String(req.body?.content ?? '');
    const id = ++seq;
    await journal.append(journalLine(id, userId, content));
    return reply.code(201).send({ id, conversation_id: req.params.id, content });
  },
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
