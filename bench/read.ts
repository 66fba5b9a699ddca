import { join } from 'node:path';
import type { UsersMeta } from './data/users.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import type { Figure } from './harness/figure.js';
import type { LoadRequest } from './harness/load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure, type Variant } from './harness/rounds.js';
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

/**
 * read: authenticated GETs of pinbot (GET /me, GET /wallet/balance; GET /me again on a server
 * with rate limits on) against a bare Express 5 app answering a small JSON object after a Map
 * lookup of the key, interleaved in one run. Each connection authenticates as its own user (100
 * users in the store).
 */
export default defineBench({
  name: 'read',
  summary: 'GET /api/v1/me and /wallet/balance vs a bare Express 5 Map lookup (target ≥ 0.8×, every round ≥ 0.7×)',
  async run(ctx) {
    const ds = await dataset<UsersMeta>('users', { users: 100 }, ctx.progress);
    const tmp = runDir('read');
    const users = ds.meta.users.slice(0, ctx.connections);
    copyStore(ds, join(tmp.dir, 'data'));
    copyStore(ds, join(tmp.dir, 'data-limited'));
    const pinbot = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data') });
    const limited = await startPinbot({ name: 'pinbot-limited', runDir: tmp.dir, dataDir: join(tmp.dir, 'data-limited'), config: LIMITED });
    const bare = await spawnServer({ name: 'bare-read', args: ['bin/run-ts.js', 'bench/baselines/bare-read.ts', join(ds.dir, 'meta.json')] });
    try {
      const figures: Figure[] = [];
      const variants: Record<string, Variant> = { bare: { url: bare.url, server: bare, requests: getAs(users, '/api/v1/me') } };
      for (const path of READ_ROUTES) {
        const p = await probe(pinbot.url, 'GET', path, { 'X-API-Key': users[0]!.key });
        if (p.status === 200) variants[path] = { url: pinbot.url, server: pinbot, requests: getAs(users, path) };
        else figures.push({ bench: 'read', name: `read GET ${path}`, target: '≥ 0.8×, every round ≥ 0.7×', note: `not measured: the route answered ${p.status} ${p.body?.error?.code ?? ''} (not in this build)` });
      }
      variants.limited = { url: limited.url, server: limited, requests: getAs(users, '/api/v1/me') };
      ctx.progress(`read: ${Object.keys(variants).join(', ')} × ${ctx.rounds} rounds of ${ctx.durationS} s, ${ctx.connections} connections`);
      const runs = await interleave(variants, ctx);
      const bareRuns = runs.bare!;
      const baseline = { name: 'bare express read', runs: bareRuns, min: 0.8, roundMin: 0.7 };
      for (const path of READ_ROUTES) if (runs[path]) figures.push(throughputFigure('read', `read GET ${path}`, runs[path], baseline));
      figures.push(throughputFigure('read', 'read GET /api/v1/me, rate limits on', runs.limited!, baseline));
      figures.push(throughputFigure('read', 'baseline: bare express read', bareRuns));
      return figures;
    } finally {
      await Promise.all([pinbot.stop(), limited.stop(), bare.stop()]);
      tmp.cleanup();
    }
  },
});
