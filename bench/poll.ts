import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { asBigParticipants, LARGE_STORE, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';

/**
 * poll: GET /conversations/:id/messages?since=T in a conversation of 100k messages (1M in the
 * store), where T leaves the 10 newest to return, against the same poll in a conversation of 100
 * (1k in the store, its own server): what a poll costs must not grow with the conversation or
 * the store. GET /me on the large store's server is measured beside it, interleaved, as the
 * cheapest read. Connection i is participant i of the conversation.
 */
export default defineBench({
  name: 'poll',
  summary:
    'GET …/messages?since= in a 100k conversation, 1M stored, vs the same poll in a 100-message one (target ≥ 0.7×)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', LARGE_STORE, ctx.progress);
    const small = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const tmp = runDir('poll');
    copyStore(ds, join(tmp.dir, 'data'));
    copyStore(small, join(tmp.dir, 'small'));
    const srv = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data'), timeoutMs: 120_000 });
    const smallSrv = await startPinbot({ name: 'pinbot-small', runDir: tmp.dir, dataDir: join(tmp.dir, 'small') });
    try {
      const pollOf = (meta: MessagesMeta) =>
        asBigParticipants(
          meta,
          ctx.connections,
          `/api/v1/conversations/${meta.big.id}/messages?since=${meta.big.pollSince}`,
        );
      const poll = pollOf(ds.meta);
      const pollSmall = pollOf(small.meta);
      const me = asBigParticipants(ds.meta, ctx.connections, '/api/v1/me');
      for (const [url, meta, requests] of [
        [srv.url, ds.meta, poll],
        [smallSrv.url, small.meta, pollSmall],
      ] as const) {
        const p = await probe(url, 'GET', requests[0]!.path, requests[0]!.headers);
        if (p.status !== 200 || p.body.messages?.length !== meta.big.pollNew) {
          throw new Error(
            `GET ${requests[0]!.path} answered ${p.status} with ` +
              `${p.body.messages?.length} messages, expected ${meta.big.pollNew}`,
          );
        }
      }
      const { big } = ds.meta;
      const few = small.meta.big;
      ctx.progress(
        `poll: ${big.messages} and ${few.messages} messages in the conversations, ` +
          `${big.pollNew} per poll; ${poll.length} connections`,
      );
      const runs = await interleave(
        {
          read: { url: srv.url, server: srv, requests: me },
          poll: { url: srv.url, server: srv, requests: poll },
          small: { url: smallSrv.url, server: smallSrv, requests: pollSmall },
        },
        ctx,
      );
      const name = `poll GET …/messages?since= (${big.pollNew} new of ${big.messages / 1000}k)`;
      const vsRead = throughputFigure('poll', `${name} vs GET /me`, runs.poll, {
        name: 'GET /me, same server',
        runs: runs.read,
      });
      vsRead.note =
        `${vsRead.note}; no target: a poll answers ten messages, GET /me a 75-byte ` + `profile (docs/performance.md)`;
      return [
        throughputFigure('poll', name, runs.poll, {
          name: `the same poll, ${few.pollNew} new of ${few.messages} (1k store)`,
          runs: runs.small,
          min: 0.7,
        }),
        throughputFigure('poll', `poll baseline: ${few.pollNew} new of ${few.messages} (1k store)`, runs.small),
        vsRead,
        throughputFigure('poll', 'poll baseline: GET /me on the 1M store', runs.read),
      ];
    } finally {
      await Promise.all([srv.stop(0), smallSrv.stop(0)]);
      tmp.cleanup();
    }
  },
});
