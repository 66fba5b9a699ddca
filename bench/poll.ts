import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { asBigParticipants, LARGE_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';

/**
 * poll: GET /conversations/:id/messages?since=T in a conversation of 100k messages (1M in the
 * store), where T leaves the 10 newest to return, against GET /me on the same server
 * (the read figure), interleaved. Connection i is participant i of the conversation.
 */
export default defineBench({
  name: 'poll',
  summary: 'GET …/messages?since= in a 100k conversation, 1M stored, vs GET /me (target ≥ 0.7×)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', LARGE_STORE, ctx.progress);
    const tmp = runDir('poll');
    copyStore(ds, join(tmp.dir, 'data'));
    const srv = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data'), timeoutMs: 120_000 });
    try {
      const { big } = ds.meta;
      const pollPath = `/api/v1/conversations/${big.id}/messages?since=${big.pollSince}`;
      const poll = asBigParticipants(ds.meta, ctx.connections, pollPath);
      const me = asBigParticipants(ds.meta, ctx.connections, '/api/v1/me');
      const p = await probe(srv.url, 'GET', pollPath, poll[0]!.headers);
      if (p.status !== 200 || p.body.messages?.length !== big.pollNew) {
        throw new Error(`GET ${pollPath} answered ${p.status} with ${p.body.messages?.length} messages, expected ${big.pollNew}`);
      }
      ctx.progress(`poll: ${big.messages} messages in the conversation, ${big.pollNew} per poll; ${poll.length} connections`);
      const runs = await interleave({ read: { url: srv.url, server: srv, requests: me }, poll: { url: srv.url, server: srv, requests: poll } }, ctx);
      return [
        throughputFigure('poll', `poll GET …/messages?since= (${big.pollNew} new of ${big.messages / 1000}k)`, runs.poll, { name: 'GET /me, same server', runs: runs.read, min: 0.7 }),
        throughputFigure('poll', 'poll baseline: GET /me on the 1M store', runs.read),
      ];
    } finally {
      await srv.stop(0);
      tmp.cleanup();
    }
  },
});
