// What metrics and traces cost the read path: GET /api/v1/me on three pinbot servers,
// interleaved round by round — metrics off (`metrics.enabled: false`), metrics on (the default),
// and tracing configured (OTEL_EXPORTER_OTLP_ENDPOINT to a sink in this process, http/json) —
// with the servers' CPU time per request. docs/performance.md ("Metrics and traces").
//   node bin/run-ts.js bench/tools/read-telemetry.ts [rounds] [seconds]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { UsersMeta } from '../data/users.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { startPinbot } from '../harness/pinbot-server.js';
import { runDir } from '../harness/paths.js';
import { interleave } from '../harness/rounds.js';
import { getAs } from '../read.js';

const rounds = Number(process.argv[2] ?? 3);
const durationS = Number(process.argv[3] ?? 3);
const progress = (m: string) => console.log(m);
const sink = createServer((req, res) => req.resume().on('end', () => res.end('{}')));
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
const ds = await dataset<UsersMeta>('users', { users: 100 }, progress);
const tmp = runDir('read-telemetry');
const users = ds.meta.users.slice(0, 50);
for (const d of ['off', 'on', 'traced']) copyStore(ds, join(tmp.dir, d));
const off = await startPinbot({
  name: 'metrics-off',
  runDir: tmp.dir,
  dataDir: join(tmp.dir, 'off'),
  config: { metrics: { enabled: false } },
});
const on = await startPinbot({ name: 'metrics-on', runDir: tmp.dir, dataDir: join(tmp.dir, 'on') });
// the child inherits the environment when it is spawned
Object.assign(process.env, {
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
});
const traced = await startPinbot({ name: 'traced', runDir: tmp.dir, dataDir: join(tmp.dir, 'traced') });
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
try {
  const requests = getAs(users, '/api/v1/me');
  const runs = await interleave(
    {
      off: { url: off.url, server: off, requests },
      on: { url: on.url, server: on, requests },
      traced: { url: traced.url, server: traced, requests },
    },
    { rounds, durationS, connections: 50, progress },
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cpu = (k: keyof typeof runs) => median(runs[k].map((r) => r.cpuUsPerReq ?? NaN));
  const rps = (k: keyof typeof runs) => median(runs[k].map((r) => r.rps));
  for (const k of ['off', 'on', 'traced'] as const)
    console.log(`${k}: ${Math.round(rps(k))} req/s, CPU ${cpu(k).toFixed(1)} µs/req`);
  console.log(
    `metrics on − off: ${(cpu('on') - cpu('off')).toFixed(2)} µs CPU per request; ` +
      `traced − on: ${(cpu('traced') - cpu('on')).toFixed(1)} µs`,
  );
} finally {
  await Promise.all([off.stop(), on.stop(), traced.stop()]);
  sink.close();
  tmp.cleanup();
}
