import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import { postMessages, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { CACHE, runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';
import { spawnServer } from './harness/server-process.js';

const RECORDS = 100_000;

/** json-server's own db.json with `RECORDS` posts (its format, so written directly), cached. */
function jsonServerDb(): string {
  const dir = join(CACHE, 'datasets');
  const file = join(dir, `json-server-posts-${RECORDS}.json`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const posts = Array.from({ length: RECORDS }, (_, i) => ({
    id: i + 1,
    title: `post ${i + 1}`,
    author: `author ${i % 200}`,
    body: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.',
  }));
  writeFileSync(`${file}.partial`, JSON.stringify({ posts, comments: [], profile: { name: 'bench' } }, null, 2));
  renameSync(`${file}.partial`, file);
  return file;
}

const POST_BODY = JSON.stringify({
  title: 'a new post',
  author: 'bench',
  body: 'Load test message: lorem ipsum dolor sit amet, consectetur adipiscing elit.',
});

/**
 * json-server: pinbot's write (POST /conversations/:id/messages, 1k stored) against json-server
 * 0.17's POST /posts on a db.json of 100k posts, interleaved; the figure is the multiple.
 * json-server rewrites its whole file (without fsync) on every write, so its cost grows with
 * the data; pinbot appends a journal line and fsyncs it.
 */
export default defineBench({
  name: 'json-server',
  summary: 'pinbot write vs json-server 0.17 POST /posts at 100k records (report the multiple)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const tmp = runDir('json-server');
    const db = join(tmp.dir, 'db.json');
    copyFileSync(jsonServerDb(), db);
    copyStore(ds, join(tmp.dir, 'data'));
    const pinbot = await startPinbot({ runDir: tmp.dir, dataDir: join(tmp.dir, 'data') });
    const js = await spawnServer({
      name: 'json-server',
      args: ['bin/run-ts.js', 'bench/baselines/json-server.ts', db],
    });
    try {
      const js201 = await probe(js.url, 'POST', '/posts', {}, POST_BODY);
      if (js201.status !== 201) throw new Error(`json-server POST /posts answered ${js201.status}`);
      const requests = postMessages(ds.meta, ctx.connections);
      const jsRequests = [
        { method: 'POST' as const, path: '/posts', headers: { 'Content-Type': 'application/json' }, body: POST_BODY },
      ];
      ctx.progress(
        `json-server: ${RECORDS / 1000}k posts, 4 connections (pinbot ${ctx.connections}); ${ctx.rounds} rounds`,
      );
      const runs = await interleave(
        // json-server writes one request at a time, each taking a large fraction of a second: a
        // few connections keep it busy, and a longer run completes enough requests to count.
        {
          'json-server': {
            url: js.url,
            server: js,
            requests: jsRequests,
            connections: 4,
            durationS: Math.max(8, ctx.durationS),
            timeoutS: 30,
          },
          pinbot: { url: pinbot.url, server: pinbot, requests },
        },
        { ...ctx, warmupS: 1 },
      );
      const fig = throughputFigure('json-server', 'json-server: pinbot write ÷ json-server', runs.pinbot, {
        name: 'json-server 0.17 POST /posts, 100k',
        runs: runs['json-server'],
      });
      fig.target = 'report the multiple';
      return [
        fig,
        throughputFigure('json-server', 'baseline: json-server 0.17 POST /posts, 100k', runs['json-server']),
      ];
    } finally {
      await Promise.all([pinbot.stop(), js.stop()]);
      tmp.cleanup();
    }
  },
});
