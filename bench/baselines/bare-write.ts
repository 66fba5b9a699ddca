// Baseline of the write bench: a bare Express 5 app that parses the JSON body, looks the key up
// in a Map and appends a 200-byte line to a file, answering after the fsync that covers it.
// Group commit as pinbot's store does it: lines arriving during an fsync share the next one
// (group-commit.ts, shared with fastify-write.ts).
// node bin/run-ts.js bench/baselines/bare-write.ts META_JSON FILE
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { UsersMeta } from '../data/users.js';
import { groupCommit, journalLine } from './group-commit.js';

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const byKey = new Map(meta.users.map((u) => [u.key, u.id]));
const journal = await groupCommit(process.argv[3]!);
let seq = 0;

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: '100kb' }));
app.post('/api/v1/conversations/:id/messages', (req, res) => {
  const userId = byKey.get(req.get('x-api-key') ?? '');
  if (!userId) {
    res.status(401).json({ error: { code: 'unauthorized', message: 'no such key' } });
    return;
  }
  const content = String((req.body as { content?: unknown })?.content ?? '');
  const id = ++seq;
  void journal
    .append(journalLine(id, userId, content))
    .then(() => res.status(201).json({ id, conversation_id: req.params.id, content }));
});

const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
