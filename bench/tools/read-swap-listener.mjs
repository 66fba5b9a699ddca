// Loaded into a `pinbot serve` process by bench/tools/read-features.ts (variant `bare-swap`,
// `--import`): the server's HTTP server is made with bare node:http's handler of the read bench
// (bench/baselines/node-read.ts: a Map lookup of the key, JSON.stringify) instead of pinbot's
// listener — pinbot's process, config, server options and response class, none of its request
// path. Against `node` it shows what the process costs a read apart from the listener; against
// `bare` what the listener costs. SWAP_META: the data set's meta.json (its users and keys).
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const meta = JSON.parse(readFileSync(process.env.SWAP_META, 'utf8'));
const byKey = new Map(meta.users.map((u) => [u.key, { id: u.id, display_name: u.name, pin_code: u.pin }]));
const handler = (req, res) => {
  const user =
    req.url === '/api/v1/me' && req.method === 'GET' ? byKey.get(req.headers['x-api-key'] ?? '') : undefined;
  const body = JSON.stringify(user ?? { error: { code: 'unauthorized', message: 'no such key' } });
  res.statusCode = user ? 200 : 401;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
};
const createServer = http.createServer;
http.createServer = function (options, _listener) {
  return typeof options === 'function' ? createServer.call(this, handler) : createServer.call(this, options, handler);
};
// the ES module binding `import { createServer } from 'node:http'` follows the change
syncBuiltinESMExports();
