import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { UsersMeta } from './data/users.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import type { Figure } from './harness/figure.js';
import type { LoadRequest } from './harness/load.js';
import type { LoadResult } from './harness/load-spec.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure, withCpuRatio, type Variant } from './harness/rounds.js';
import { spawnServer } from './harness/server-process.js';

/** GET `path` as each of `users` in turn (connection i authenticates as user i). */
export function getAs(users: readonly { key: string }[], path: string): LoadRequest[] {
  return users.map((u) => ({ method: 'GET', path, headers: { 'X-API-Key': u.key } }));
}

const READ_ROUTES = ['/api/v1/me', '/api/v1/wallet/balance'];

/**
 * Rate limits on (as `serve` runs by default), with a budget no load here reaches, so every
 * request is counted and answered with its RateLimit fields but none is refused.
 */
const LIMITED = { rate_limits: { enabled: true, general: { limit: 1_000_000_000, window: '1m' } } };

/** The anchors (issue 33): pinbot's reads as `serve` runs them against Fastify 5 doing the same lookup. */
const FASTIFY_MIN = 0.85;
const FASTIFY_ROUND_MIN = 0.75;

/** The rows of a run: pinbot's reads against Fastify 5, then the baselines. Internal. */
function readFigures(runs: Record<string, LoadResult[]>): Figure[] {
  const figures: Figure[] = [];
  const anchor = { name: 'fastify 5 read', runs: runs.fastify!, min: FASTIFY_MIN, roundMin: FASTIFY_ROUND_MIN };
  // as serve runs it (request log, rate limits on): the gated row
  figures.push(
    withCpuRatio(
      throughputFigure('read', 'read GET /api/v1/me, rate limits on (as serve)', runs.limited!, anchor),
      runs.limited!,
      runs.fastify!,
    ),
  );
  figures.push(
    withCpuRatio(
      throughputFigure('read', 'read GET /api/v1/me as serve, no plugins (no AsyncLocalStorage)', runs.limitedBare!, {
        name: anchor.name,
        runs: anchor.runs,
      }),
      runs.limitedBare!,
      runs.fastify!,
    ),
  );
  // GET /me does what the baselines do (a key lookup, a small JSON object): gated; the balance
  // reads the wallet too, and is reported against the same anchor
  for (const path of READ_ROUTES) {
    if (!runs[path]) continue;
    const against = path === '/api/v1/me' ? anchor : { name: anchor.name, runs: anchor.runs };
    figures.push(
      withCpuRatio(throughputFigure('read', `read GET ${path}`, runs[path], against), runs[path], runs.fastify!),
    );
  }
  figures.push(
    throughputFigure('read', 'read GET /api/v1/me ÷ bare express', runs['/api/v1/me'] ?? runs.limited!, {
      name: 'bare express read',
      runs: runs.bare!,
    }),
  );
  figures.push(throughputFigure('read', 'baseline: fastify 5 read', runs.fastify!));
  figures.push(
    throughputFigure('read', 'baseline: node:http read', runs.node!, {
      name: 'fastify 5 read',
      runs: runs.fastify!,
    }),
  );
  figures.push(
    throughputFigure('read', 'baseline: bare express read', runs.bare!, {
      name: 'fastify 5 read',
      runs: runs.fastify!,
    }),
  );
  return figures;
}

/**
 * read: authenticated GETs of pinbot (GET /me, GET /wallet/balance with rate limits off; GET /me
 * with rate limits on, as `serve` runs it) against three baselines answering the same small JSON
 * object after a Map lookup of the key — Fastify 5 (the target), bare node:http (the floor of
 * what Node can do) and a bare Express 5 app — interleaved in one run. Each connection
 * authenticates as its own user (100 users in the store). Every row gives its CPU µs/request.
 */
export default defineBench({
  name: 'read',
  summary:
    `GET /api/v1/me (rate limits on, as serve runs it) and /wallet/balance vs Fastify ` +
    `5, node:http and Express 5 doing a Map lookup (target ≥ ${FASTIFY_MIN}× Fastify, ` +
    `every round ≥ ${FASTIFY_ROUND_MIN}×)`,
  async run(ctx) {
    const ds = await dataset<UsersMeta>('users', { users: 100 }, ctx.progress);
    const tmp = runDir('read');
    const users = ds.meta.users.slice(0, ctx.connections);
    copyStore(ds, join(tmp.dir, 'data'));
    copyStore(ds, join(tmp.dir, 'data-limited'));
    const pinbot = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data') });
    const limited = await startPinbot({
      name: 'pinbot-limited',
      runDir: tmp.dir,
      dataDir: join(tmp.dir, 'data-limited'),
      config: LIMITED,
    });
    // the same with no plugins loaded (and no bots, as every server here): no AsyncLocalStorage
    // ever runs, which on Node 20 costs every async resource of the process (docs/performance.md)
    const noPlugins = join(tmp.dir, 'no-plugins');
    mkdirSync(noPlugins);
    copyStore(ds, join(tmp.dir, 'data-bare'));
    const limitedBare = await startPinbot({
      name: 'pinbot-limited-no-plugins',
      runDir: tmp.dir,
      dataDir: join(tmp.dir, 'data-bare'),
      config: { ...LIMITED, plugins: { dir: noPlugins } },
    });
    const meta = join(ds.dir, 'meta.json');
    const bare = await spawnServer({
      name: 'bare-read',
      args: ['bin/run-ts.js', 'bench/baselines/bare-read.ts', meta],
    });
    const fastify = await spawnServer({
      name: 'fastify-read',
      args: ['bin/run-ts.js', 'bench/baselines/fastify-read.ts', meta],
    });
    const node = await spawnServer({
      name: 'node-read',
      args: ['bin/run-ts.js', 'bench/baselines/node-read.ts', meta],
    });
    try {
      const figures: Figure[] = [];
      const me = getAs(users, '/api/v1/me');
      // a round runs them in this order: the gated rows right after their anchor, so the two
      // sides of a round's ratio are measured seconds apart, not a whole round (a busy machine
      // drifts within a round: the pair must see the same minute)
      const variants: Record<string, Variant> = {
        fastify: { url: fastify.url, server: fastify, requests: me },
        limited: { url: limited.url, server: limited, requests: me },
      };
      const later: Record<string, Variant> = {
        limitedBare: { url: limitedBare.url, server: limitedBare, requests: me },
        node: { url: node.url, server: node, requests: me },
      };
      for (const path of READ_ROUTES) {
        const p = await probe(pinbot.url, 'GET', path, { 'X-API-Key': users[0]!.key });
        const to = path === '/api/v1/me' ? variants : later;
        if (p.status === 200) to[path] = { url: pinbot.url, server: pinbot, requests: getAs(users, path) };
        else
          figures.push({
            bench: 'read',
            name: `read GET ${path}`,
            target: `≥ ${FASTIFY_MIN}× Fastify`,
            note: `not measured: the route answered ${p.status} ${p.body?.error?.code ?? ''} (not in this build)`,
          });
      }
      Object.assign(variants, later, { bare: { url: bare.url, server: bare, requests: me } });
      ctx.progress(
        `read: ${Object.keys(variants).join(', ')} × ${ctx.rounds} rounds of ` +
          `${ctx.durationS} s, ${ctx.connections} connections`,
      );
      const runs = await interleave(variants, ctx);
      figures.push(...readFigures(runs));
      return figures;
    } finally {
      await Promise.all([pinbot.stop(), limited.stop(), limitedBare.stop(), bare.stop(), fastify.stop(), node.stop()]);
      tmp.cleanup();
    }
  },
});
