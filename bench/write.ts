import { closeSync, fdatasyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { median, type Figure } from './harness/figure.js';
import { MESSAGE_BODY, postMessages, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { type LoadRequest, type LoadResult, UNIQUE_ID } from './harness/load-spec.js';
import { interleave, throughputFigure, withCpuRatio } from './harness/rounds.js';
import { spawnServer } from './harness/server-process.js';

/** The anchor (issue 33): Fastify 5 with the same group-commit journal. */
const FASTIFY_MIN = 0.8;

/** The reported baseline doing a keyed write's work on Fastify (fastify-write-contract.ts). */
const CONTRACT = 'fastify 5 + fsync doing the contract’s write (keyed)';
const CONTRACT_TS = 'bench/baselines/fastify-write-contract.ts';
const CONTRACT_SHORT = 'fastify doing the contract’s write';

/** pinbot as `serve` runs it: rate limits on (limits no load reaches), the request log, metrics. */
const AS_SERVE = {
  rate_limits: {
    enabled: true,
    general: { limit: 1_000_000_000, window: '1m' },
    messages: { limit: 1_000_000_000, window: '1m' },
  },
};

/** Every write of pinbot's carries an Idempotency-Key of its own, as a careful client sends. */
function withIdempotencyKeys(requests: LoadRequest[]): LoadRequest[] {
  return requests.map((r) => ({ ...r, headers: { ...r.headers, 'Idempotency-Key': `write-${UNIQUE_ID}` } }));
}

/**
 * The disk's floor: `ms` of 200-byte appends each followed by its own fdatasync, one after the
 * other, in a file of `dir` (the data directory's file system). Returns the median and p99 of
 * one append + fdatasync in µs and how many a second. Internal.
 */
function fdatasyncFloor(dir: string, ms: number): { medianUs: number; p99Us: number; perS: number } {
  const path = join(dir, 'fdatasync-floor.log');
  const fd = openSync(path, 'a');
  const line = `${'x'.repeat(199)}\n`;
  const times: number[] = [];
  const t0 = performance.now();
  try {
    while (performance.now() - t0 < ms) {
      const s = performance.now();
      writeSync(fd, line);
      fdatasyncSync(fd);
      times.push((performance.now() - s) * 1000);
    }
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return {
    medianUs: median(times),
    p99Us: sorted[Math.floor(sorted.length * 0.99)]!,
    perS: (times.length * 1000) / (performance.now() - t0),
  };
}

/** One POST over a kept-alive connection; resolves with its status once the answer is read. Internal. */
function post(agent: Agent, url: string, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * How many writes shared each fdatasync over the whole run (warm-ups included), from the
 * server's /metrics: its answered POSTs to the route over its group commits. Internal.
 */
async function writesPerSync(url: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  const commits = sum(/^pinbot_store_commit_duration_seconds_count\{[^}]*\} (\d+)/gm);
  const posts = sum(/^pinbot_http_requests_total\{[^}]*route="[^"]*:id\/messages"[^}]*method="POST"[^}]*\} (\d+)/gm);
  return commits > 0 && posts > 0 ? posts / commits : undefined;
}

/**
 * The latency of one durable write with nothing else in flight: `ms` of POSTs one after the
 * other on one connection; the median in µs. Internal.
 */
async function aloneUs(url: string, path: string, headers: Record<string, string>, ms: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const t0 = performance.now();
  let n = 0;
  try {
    while (performance.now() - t0 < ms) {
      const s = performance.now();
      // a fresh Idempotency-Key each time: a repeated one would be a replay, not a write
      const fresh = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, v.replace(UNIQUE_ID, `alone-${++n}`)]),
      );
      const status = await post(agent, url, path, fresh, MESSAGE_BODY);
      if (status !== 201) throw new Error(`a write alone answered ${status}`);
      times.push((performance.now() - s) * 1000);
    }
  } finally {
    agent.destroy();
  }
  return median(times);
}

/**
 * Throws unless a POST repeated with its Idempotency-Key is answered with the first answer's
 * bytes (and `Idempotent-Replayed: true`). Internal.
 */
async function replays(name: string, url: string, r: LoadRequest): Promise<void> {
  const headers = { ...r.headers, 'Idempotency-Key': `replay-${name}` };
  const send = async () => {
    const res = await fetch(url + r.path, { method: 'POST', headers, body: MESSAGE_BODY });
    const replayed = res.headers.get('idempotent-replayed');
    return { status: res.status, text: await res.text(), replayed };
  };
  const [a, b] = [await send(), await send()];
  if (a.status !== 201 || b.status !== 201 || a.text !== b.text || b.replayed !== 'true') {
    const first = `${a.status} ${a.text}`;
    throw new Error(`${name}: a repeated key answered ${b.status} ${b.text}, first ${first}`);
  }
}

type Floor = ReturnType<typeof fdatasyncFloor>;

/** The bench's rows from its runs, the fdatasync floor and the lone writes. Internal. */
function figures(
  runs: Record<'fastify' | 'contract' | 'bare' | 'pinbot' | 'plain', LoadResult[]>,
  floor: Floor,
  alone: { pinbot: number; fastify: number },
  perSync: number | undefined,
): Figure[] {
  const row = withCpuRatio(
    throughputFigure('write', 'write POST /conversations/:id/messages (as serve, Idempotency-Key)', runs.pinbot, {
      name: 'fastify 5 + fsync',
      runs: runs.fastify,
      min: FASTIFY_MIN,
    }),
    runs.pinbot,
    runs.fastify,
  );
  // how close a durable write is to the disk: one write alone, against one append + fdatasync
  row.note =
    `${row.note}; one write alone ${Math.round(alone.pinbot)} µs = ` +
    `${(alone.pinbot / floor.medianUs).toFixed(1)}× one fdatasync (fastify ` +
    `${(alone.fastify / floor.medianUs).toFixed(1)}×)` +
    (perSync === undefined ? '' : `; ${perSync.toFixed(1)} writes per fdatasync`);
  const fig: Figure = {
    bench: 'write',
    name: 'fdatasync alone (same file system)',
    p50: floor.medianUs / 1000,
    p99: floor.p99Us / 1000,
    value:
      `${Math.round(floor.perS)} append+fdatasync/s one after the other, ` +
      `${Math.round(floor.medianUs)} µs each (median)`,
  };
  return [
    row,
    withCpuRatio(
      throughputFigure('write', 'write POST …/messages (rate limits off, no key)', runs.plain, {
        name: 'fastify 5 + fsync',
        runs: runs.fastify,
      }),
      runs.plain,
      runs.fastify,
    ),
    throughputFigure('write', 'write ÷ bare express + fsync', runs.pinbot, {
      name: 'bare express + fsync',
      runs: runs.bare,
    }),
    throughputFigure('write', 'baseline: fastify 5 + fsync', runs.fastify),
    // reported: what of the gap is the contract's work (API.md) and what is pinbot's
    withCpuRatio(
      throughputFigure('write', `write as serve ÷ ${CONTRACT_SHORT}`, runs.pinbot, {
        name: CONTRACT,
        runs: runs.contract,
      }),
      runs.pinbot,
      runs.contract,
    ),
    withCpuRatio(
      throughputFigure('write', `baseline: ${CONTRACT}`, runs.contract, {
        name: 'fastify 5 + fsync',
        runs: runs.fastify,
      }),
      runs.contract,
      runs.fastify,
    ),
    throughputFigure('write', 'baseline: bare express + fsync', runs.bare, {
      name: 'fastify 5 + fsync',
      runs: runs.fastify,
    }),
    fig,
  ];
}

/**
 * write: POST /conversations/:id/messages as `serve` runs it (rate limits on, the request log,
 * metrics; each with an Idempotency-Key of its own; each answered after the fsync of its journal line)
 * (and, beside it, the same writes with rate limits off and no key) against Fastify 5 (the
 * target) and a bare Express 5 app, each appending a 200-byte line with
 * group-commit fdatasync, interleaved; then fdatasync alone on the same file system, the floor
 * of any durable write. Store: 200 users, 1k messages; connection i posts into its own direct
 * conversation.
 */
export default defineBench({
  name: 'write',
  summary:
    `POST /conversations/:id/messages vs Fastify 5 + the same group-commit fsync ` +
    `(target ≥ ${FASTIFY_MIN}×), Express 5 + fsync, fdatasync alone`,
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const tmp = runDir('write');
    copyStore(ds, join(tmp.dir, 'data'));
    copyStore(ds, join(tmp.dir, 'data-plain'));
    const meta = join(ds.dir, 'meta.json');
    const pinbot = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data'), config: AS_SERVE });
    // the same writes with rate limits off and no key: what the key and the limits cost, same run
    const plain = await startPinbot({ name: 'pinbot-plain', runDir: tmp.dir, dataDir: join(tmp.dir, 'data-plain') });
    const bare = await spawnServer({
      name: 'bare-write',
      args: ['bin/run-ts.js', 'bench/baselines/bare-write.ts', meta, join(tmp.dir, 'bare.log')],
    });
    const fastify = await spawnServer({
      name: 'fastify-write',
      args: ['bin/run-ts.js', 'bench/baselines/fastify-write.ts', meta, join(tmp.dir, 'fastify.log')],
    });
    const contract = await spawnServer({
      name: 'fastify-write-contract',
      args: ['bin/run-ts.js', CONTRACT_TS, meta, join(tmp.dir, 'contract.log')],
    });
    try {
      const requests = postMessages(ds.meta, ctx.connections);
      const keyed = withIdempotencyKeys(requests);
      const first = requests[0]!;
      for (const [name, url, r] of [
        ['pinbot', pinbot.url, keyed[0]!],
        ['pinbot-plain', plain.url, first],
        ['fastify', fastify.url, first],
        ['fastify-contract', contract.url, keyed[0]!],
        ['express', bare.url, first],
      ] as const) {
        const headers = { ...r.headers, 'Idempotency-Key': `probe-${name}` };
        const p = await probe(url, 'POST', first.path, headers, MESSAGE_BODY);
        if (p.status !== 201)
          throw new Error(`${name}: POST ${first.path} answered ${p.status} ${JSON.stringify(p.body)}`);
      }
      // the keyed servers answer a repeated key with the first answer's bytes, as API.md asks
      for (const [name, url] of [
        ['pinbot', pinbot.url],
        ['fastify-contract', contract.url],
      ] as const)
        await replays(name, url, keyed[0]!);
      ctx.progress(`write: ${requests.length} connections, ${ctx.rounds} rounds of ${ctx.durationS} s`);
      const runs = await interleave(
        {
          fastify: { url: fastify.url, server: fastify, requests },
          contract: { url: contract.url, server: contract, requests: keyed },
          bare: { url: bare.url, server: bare, requests },
          pinbot: { url: pinbot.url, server: pinbot, requests: keyed },
          plain: { url: plain.url, server: plain, requests },
        },
        ctx,
      );
      const perSync = await writesPerSync(pinbot.url);
      const floor = fdatasyncFloor(join(tmp.dir, 'data'), Math.min(3000, ctx.durationS * 1000));
      const alone = {
        pinbot: await aloneUs(pinbot.url, first.path, keyed[0]!.headers ?? {}, 1500),
        fastify: await aloneUs(fastify.url, first.path, first.headers ?? {}, 1500),
      };
      return figures(runs, floor, alone, perSync);
    } finally {
      const servers = [pinbot, plain, bare, fastify, contract];
      await Promise.all(servers.map((s) => s.stop()));
      tmp.cleanup();
    }
  },
});
