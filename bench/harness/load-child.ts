// The load generator process: runs autocannon for each spec it is sent over IPC and answers
// with what it measured. It runs in its own process (pinned away from the server) and lives for
// a whole bench, so a run costs no process start and the harness never steals the server's CPU.
import autocannon from 'autocannon';
import { type LoadResult, type LoadSpec, UNIQUE_ID } from './load-spec.js';

async function run(spec: LoadSpec): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    timeout: spec.timeoutS ?? 10,
    // Each connection keeps one request of the spec for the whole run (its user, its path).
    setupClient: (client) => {
      const r = spec.requests[next++ % spec.requests.length]!;
      client.setRequests([{ method: r.method, path: r.path, headers: r.headers ?? {}, body: r.body }]);
    },
    requests: [{ method: spec.requests[0]!.method, path: spec.requests[0]!.path }],
    // `[<id>]` in a request's headers or body becomes a fresh id in every request sent
    // (an Idempotency-Key per write)
    idReplacement: spec.requests.some((r) => JSON.stringify(r).includes(UNIQUE_ID)),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(v.count);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

process.on('message', (msg: { id: number; spec: LoadSpec }) => {
  run(msg.spec).then(
    (result) => process.send!({ id: msg.id, result }),
    (err: Error) => process.send!({ id: msg.id, error: err.stack ?? err.message }),
  );
});
process.on('disconnect', () => process.exit(0));
