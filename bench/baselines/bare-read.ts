// Baseline of the read bench: a bare Express 5 app that looks the presented key up in a Map and
// answers a small JSON object, with nothing else (no logging, validation or store).
// node bin/run-ts.js bench/baselines/bare-read.ts META_JSON   (META_JSON: { users: [{ key, id, pin, name }] })
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { UsersMeta } from '../data/users.js';

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const byKey = new Map(meta.users.map((u) => [u.key, { id: u.id, display_name: u.name, pin_code: u.pin }]));

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/api/v1/me', (req, res) => {
  const user = byKey.get(req.get('x-api-key') ?? '');
  if (!user) {
    res.status(401).json({ error: { code: 'unauthorized', message: 'no such key' } });
    return;
  }
  res.json(user);
});

const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
