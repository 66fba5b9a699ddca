import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { median, type Figure } from './harness/figure.js';
import { LARGE_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';

const GB = 1024 ** 3;
/** Starts measured: each is ~5–25 s, and the figure is a time, not a ratio that needs pairs. */
const STARTS = 3;
const TARGET_S = 5;
const TARGET_RSS = 1.5 * GB;

/**
 * startup: `pinbot serve` on a store of 1M messages, from spawn until its "listening on" line,
 * 3 times (median), with the peak RSS (VmHWM) at that moment. Also notes how long the
 * first poll of the 100k conversation then takes: the store builds a collection's indexes on
 * its first use, so that cost lands on the first request, not on start-up.
 */
export default defineBench({
  name: 'startup',
  summary: 'serve on a 1M-message store until listening (target ≤ 5 s, RSS ≤ 1.5 GB)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', LARGE_STORE, ctx.progress);
    const tmp = runDir('startup');
    const bytes = copyStore(ds, join(tmp.dir, 'data'));
    const { big } = ds.meta;
    const pollPath = `/api/v1/conversations/${big.id}/messages?since=${big.pollSince}`;
    const key = ds.meta.users[big.participants[0]!]!.key;
    const times: number[] = [];
    const peaks: number[] = [];
    const firstPolls: number[] = [];
    try {
      for (let round = 1; round <= STARTS; round++) {
        const srv = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data'), timeoutMs: 120_000 });
        try {
          const peak = srv.memory()?.peak;
          const t0 = performance.now();
          const p = await probe(srv.url, 'GET', pollPath, { 'X-API-Key': key });
          const firstPoll = performance.now() - t0;
          if (p.status !== 200) throw new Error(`first poll answered ${p.status}`);
          ctx.progress(
            `  start ${round}/${STARTS}: listening after ` +
              `${(srv.startupMs / 1000).toFixed(2)} s, peak RSS ` +
              `${peak === undefined ? '?' : (peak / GB).toFixed(2) + ' GB'}, first poll ` +
              `${Math.round(firstPoll)} ms`,
          );
          times.push(srv.startupMs);
          if (peak !== undefined) peaks.push(peak);
          firstPolls.push(firstPoll);
        } finally {
          // Nothing was written, so the copy needs no shutdown snapshot: the next round reuses it.
          await srv.stop(0);
        }
      }
    } finally {
      tmp.cleanup();
    }
    const s = median(times) / 1000;
    const rss = peaks.length ? median(peaks) : undefined;
    const fig: Figure = {
      bench: 'startup',
      name:
        `startup, ${(LARGE_STORE.messages / 1e6).toFixed(0)}M messages ` +
        `(${(bytes / 1024 ** 2).toFixed(0)} MB on disk)`,
      target: `≤ ${TARGET_S} s, RSS ≤ ${TARGET_RSS / GB} GB`,
      value:
        `${s.toFixed(2)} s to listening, peak RSS ` +
        `${rss === undefined ? 'unknown' : (rss / GB).toFixed(2) + ' GB'}`,
      note:
        `starts ${times.map((t) => (t / 1000).toFixed(1)).join(' ')} s; first poll ` +
        `after start ${Math.round(median(firstPolls))} ms (index build)`,
      pass: s <= TARGET_S && (rss === undefined || rss <= TARGET_RSS),
    };
    return [fig];
  },
});
