// Baseline of the write bench: a bare Express 5 app that parses the JSON body, looks the key up
// in a Map and appends a 200-byte line to a file, answering after the fsync that covers it.
// Group commit as pinbot's store does it: lines arriving during an fsync share the next one.
// node bin/run-ts.js bench/baselines/bare-write.ts META_JSON FILE
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { UsersMeta } from '../data/users.js';

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const byKey = new Map(meta.users.map((u) => [u.key, u.id]));
const file = await open(process.argv[3]!, 'a');

let queue: Array<{ line: string; done: () => void }> = [];
let flushing = false;

/** Writes every queued line in one write + fdatasync, then wakes their requests. */
async function flush(): Promise<void> {
  flushing = true;
  while (queue.length > 0) {
    const batch = queue;
    queue = [];
    await file.write(batch.map((p) => p.line).join(''));
    await file.datasync();
    for (const p of batch) p.done();
  }
  flushing = false;
}

/** A line of exactly 200 bytes (199 + newline) holding the sender, a counter and the content. */
let seq = 0;
function line(id: number, userId: string, content: string): string {
  const head = JSON.stringify({ s: id, u: userId, t: Date.now(), c: content });
  return (head.length >= 199 ? head.slice(0, 199) : head.padEnd(199, ' ')) + '\n';
}

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
  queue.push({ line: line(id, userId, content), done: () => res.status(201).json({ id, conversation_id: req.params.id, content }) });
  if (!flushing) void flush();
});

const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
