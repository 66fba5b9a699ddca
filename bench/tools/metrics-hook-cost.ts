// The cost per request of the HTTP metrics hook (src/telemetry/http-metrics.ts): marking the
// route and recording the finished request, against the same loop without them. Prints µs per
// request; the target is under 1 µs (docs/performance.md, "Metrics and traces").
//   node bin/run-ts.js bench/tools/metrics-hook-cost.ts
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { markRoute, recordRequest, routeCells } from '../../src/telemetry/http-metrics.js';

const N = 500_000;
const cells = routeCells('/api/v1/me');
const statuses = [200, 200, 200, 304, 404];
let sink = 0;
const socket = new Socket();
/** A request as node makes it (the hook adds a property to it). */
class Born extends IncomingMessage {}

/** One pass: `hook` true records each request, false only builds it. Returns this process's CPU ms. */
function pass(hook: boolean): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const req = Object.assign(new Born(socket), { method: 'GET', originalUrl: '/api/v1/me', url: '/me' });
    if (hook) {
      markRoute(req, cells);
      recordRequest(req, statuses[i % 5]!, 1.3 + (i % 7));
    } else sink += req.url.length;
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

const rounds: number[] = [];
for (let r = 0; r < 15; r++) rounds.push(((pass(true) - pass(false)) * 1000) / N);
rounds.sort((a, b) => a - b);
console.log(
  `metrics hook: ${rounds[7]!.toFixed(3)} µs per request (median of 15 rounds of ` +
    `${N} requests, in process CPU time; min ${rounds[0]!.toFixed(3)}, max ` +
    `${rounds[14]!.toFixed(3)})${sink < 0 ? '' : ''}`,
);
