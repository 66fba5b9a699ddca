import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { MESSAGE_BODY, postMessages, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';
import { spawnServer } from './harness/server-process.js';

/**
 * write: POST /conversations/:id/messages (each answered after the fsync of its journal line)
 * against a bare Express 5 app appending a 200-byte line with group-commit fsync, interleaved.
 * Store: 200 users, 1k messages; connection i posts into its own direct conversation.
 */
export default defineBench({
  name: 'write',
  summary: 'POST /conversations/:id/messages vs bare Express 5 + group-commit fsync (target ≥ 0.6×)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const tmp = runDir('write');
    copyStore(ds, join(tmp.dir, 'data'));
    const pinbot = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data') });
    const bare = await spawnServer({ name: 'bare-write', args: ['bin/run-ts.js', 'bench/baselines/bare-write.ts', join(ds.dir, 'meta.json'), join(tmp.dir, 'bare.log')] });
    try {
      const requests = postMessages(ds.meta, ctx.connections);
      const first = requests[0]!;
      const p = await probe(pinbot.url, 'POST', first.path, first.headers, MESSAGE_BODY);
      if (p.status !== 201) throw new Error(`POST ${first.path} answered ${p.status} ${JSON.stringify(p.body)}`);
      ctx.progress(`write: ${requests.length} connections, ${ctx.rounds} rounds of ${ctx.durationS} s`);
      const runs = await interleave({ bare: { url: bare.url, server: bare, requests }, pinbot: { url: pinbot.url, server: pinbot, requests } }, ctx);
      return [
        throughputFigure('write', 'write POST /conversations/:id/messages', runs.pinbot, { name: 'bare express + fsync', runs: runs.bare, min: 0.6 }),
        throughputFigure('write', 'baseline: bare express + fsync', runs.bare),
      ];
    } finally {
      await Promise.all([pinbot.stop(), bare.stop()]);
      tmp.cleanup();
    }
  },
});
