import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { LARGE_STORE, MESSAGE_BODY, postMessages, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';

/**
 * write-scale: the write bench on a store of 1M messages against the same on 1k messages,
 * interleaved: a write's cost must not grow with the store (DESIGN.md "Store").
 */
export default defineBench({
  name: 'write-scale',
  summary: 'write with 1M stored messages vs with 1k (target ≥ 0.8×)',
  async run(ctx) {
    const small = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const large = await dataset<MessagesMeta>('messages', LARGE_STORE, ctx.progress);
    const tmp = runDir('write-scale');
    copyStore(small, join(tmp.dir, 'small'));
    copyStore(large, join(tmp.dir, 'large'));
    const s = await startPinbot({ name: 'pinbot-1k', runDir: tmp.dir, dataDir: join(tmp.dir, 'small') });
    const l = await startPinbot({
      name: 'pinbot-1M',
      runDir: tmp.dir,
      dataDir: join(tmp.dir, 'large'),
      timeoutMs: 120_000,
    });
    try {
      const reqSmall = postMessages(small.meta, ctx.connections);
      const reqLarge = postMessages(large.meta, ctx.connections);
      for (const [srv, r] of [
        [s, reqSmall[0]!],
        [l, reqLarge[0]!],
      ] as const) {
        const p = await probe(srv.url, 'POST', r.path, r.headers, MESSAGE_BODY);
        if (p.status !== 201)
          throw new Error(`${srv.name}: POST ${r.path} answered ${p.status} ${JSON.stringify(p.body)}`);
      }
      ctx.progress(
        `write-scale: 1k vs 1M messages, ${reqSmall.length} connections, ${ctx.rounds} rounds of ${ctx.durationS} s`,
      );
      const runs = await interleave(
        { '1k': { url: s.url, server: s, requests: reqSmall }, '1M': { url: l.url, server: l, requests: reqLarge } },
        ctx,
      );
      return [
        throughputFigure('write-scale', 'write-scale 1M stored messages', runs['1M'], {
          name: 'write, 1k stored',
          runs: runs['1k'],
          min: 0.8,
        }),
        throughputFigure('write-scale', 'write-scale 1k stored messages', runs['1k']),
      ];
    } finally {
      // The copies are thrown away: no need to wait for a 1M-message snapshot on the way out.
      await Promise.all([s.stop(), l.stop(0)]);
      tmp.cleanup();
    }
  },
});
