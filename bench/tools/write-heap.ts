// Issue 33 item 2: what one durable write allocates in `pinbot serve`, HTTP included.
// node --experimental-websocket bin/run-ts.js bench/tools/write-heap.ts [--plain] [--duration S]
//
// Starts `pinbot serve` as the write bench does (rate limits on, request log, metrics; each
// write with an Idempotency-Key of its own; `--plain`: limits off, no key) with the inspector on,
// loads it for a warm-up second, then samples every allocation (collected objects included:
// V8's sampling heap profiler through the inspector) while 50 connections write for
// `--duration` s, and prints the bytes allocated per write and the functions that allocate most.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { MessagesMeta } from '../data/messages.js';
import { copyStore, dataset } from '../harness/dataset.js';
import { runLoad, stopLoad } from '../harness/load.js';
import { postMessages, SMALL_STORE } from '../harness/messages-load.js';
import { runDir } from '../harness/paths.js';
import { spawnServer } from '../harness/server-process.js';
import { UNIQUE_ID } from '../harness/load-spec.js';

const { values: args } = parseArgs({
  options: { plain: { type: 'boolean', default: false }, duration: { type: 'string', default: '4' } },
});
const PORT = 9300 + Math.floor(Math.random() * 500);
const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, (m) => console.log(m));
const tmp = runDir('write-heap');
copyStore(ds, join(tmp.dir, 'data'));
const limits = args.plain
  ? { enabled: false }
  : { enabled: true, general: { limit: 1e9, window: '1m' }, messages: { limit: 1e9, window: '1m' } };
const configFile = join(tmp.dir, 'config.yaml');
writeFileSync(configFile, stringify({ rate_limits: limits, log: { level: 'info' } }));
const srv = await spawnServer({
  name: 'pinbot-heap',
  args: [
    `--inspect=127.0.0.1:${PORT}`,
    'bin/pinbot.js',
    'serve',
    '--data',
    join(tmp.dir, 'data'),
    '--port',
    '0',
    '--no-bots',
    '--config',
    configFile,
  ],
});
interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}
try {
  const plain = postMessages(ds.meta, 50);
  const requests = args.plain
    ? plain
    : plain.map((r) => ({ ...r, headers: { ...r.headers, 'Idempotency-Key': `heap-${UNIQUE_ID}` } }));
  await runLoad({ url: srv.url, connections: 50, durationS: 1, requests });
  const [target] = (await (await fetch(`http://127.0.0.1:${PORT}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener('open', r, { once: true }));
  let id = 0;
  const pending = new Map<number, (v: any) => void>();
  ws.addEventListener('message', (e) => {
    const msg = JSON.parse(String(e.data));
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  // what a write leaves behind: the heap after a full collection, before and after the load
  const heapUsed = async () => {
    await call('HeapProfiler.collectGarbage');
    return ((await call('Runtime.getHeapUsage')) as { usedSize: number }).usedSize;
  };
  await call('Runtime.enable');
  const used0 = await heapUsed();
  await call('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const r = await runLoad({ url: srv.url, connections: 50, durationS: Number(args.duration), requests });
  const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  const used1 = await heapUsed();
  ws.close();
  console.log(
    `heap after a full collection: ${(used0 / 1e6).toFixed(1)} MB before the load, ` +
      `${(used1 / 1e6).toFixed(1)} MB after: ${Math.round((used1 - used0) / r.total)} B kept per write`,
  );
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (n: Node) => {
    const f = n.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${f.lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  console.log(
    `${r.total} writes (${Math.round(r.rps)}/s); sampled ${Math.round(total / r.total)} B allocated per write:`,
  );
  for (const [site, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 45))
    console.log(
      `${String(Math.round(b / r.total)).padStart(7)} B  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${site}`,
    );
} finally {
  await srv.stop();
  stopLoad();
  tmp.cleanup();
}
