// json-server 0.17 as its CLI runs it (`json-server FILE --quiet`): defaults (with the body
// parser) and the lowdb-backed router, which rewrites FILE after every write.
// node bin/run-ts.js bench/baselines/json-server.ts DB_JSON
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);
const jsonServer = require('json-server');

const app = jsonServer.create();
app.use(jsonServer.defaults({ logger: false, bodyParser: true }));
app.use(jsonServer.router(process.argv[2]!));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
