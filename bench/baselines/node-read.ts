// Baseline of the read bench: bare node:http — the floor of what Node can do — looking the
// presented key up in a Map and answering the same small JSON object as bare-read.ts.
// node bin/run-ts.js bench/baselines/node-read.ts META_JSON   (META_JSON: { users: [{ key, id, pin, name }] })
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UsersMeta } from '../data/users.js';
import { nodeReadHandler } from './node-read-handler.js';

// BASELINE_ASYNC_STORAGE=1: one AsyncLocalStorage has run, as in a pinbot that loaded plugins (on
// Node 20 every async resource of the process then pays its hook): what that costs node:http
// itself (bench/tools/read-features.ts, variant node-als)
if (process.env.BASELINE_ASYNC_STORAGE === '1') new AsyncLocalStorage().run({}, () => undefined);

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as UsersMeta;
const server = createServer(nodeReadHandler(meta.users));
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
