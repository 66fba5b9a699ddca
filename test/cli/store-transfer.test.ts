import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/file-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { exportDataDir, importDataDir } from '../../src/deployment/store-transfer.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { testApi, tempDir } from '../helpers/api.js';
import { testDatabase } from '../helpers/pg-db.js';
import { pinbot } from '../helpers/spawn.js';

/** Every record of a store, by collection, in id order (to compare two stores). */
const contents = (state: Record<string, Array<{ id: string }>>) =>
  Object.fromEntries(
    Object.entries(state)
      .filter(([, records]) => records.length > 0)
      .map(([name, records]) => [name, JSON.stringify([...records].sort((a, b) => (a.id < b.id ? -1 : 1)))]),
  );

describe('pinbot store import / export: a data directory into PostgreSQL and back, checked', () => {
  const tmp = tempDir('pinbot-transfer-');
  const dataDir = join(tmp.dir, 'data');
  let original: Record<string, string>;
  beforeAll(async () => {
    // A data directory with users, keys, money moving, a pending transfer and an awkward note.
    const api = await testApi({ store: await FileStore.open(dataDir) });
    const a = await api.user('Ann');
    const b = await api.user('Ben');
    const { runAdminCommand } = await import('../../src/admin/commands.js');
    await runAdminCommand({ store: api.store, env: api.env }, 'users.grant', { pin: a.user.pin_code, amount: '50' });
    const sent = await api.http
      .post('/api/v1/wallet/send')
      .set(a.headers)
      .send({ recipient_pin: b.user.pin_code, amount: 12.5, note: 'nul \u0000 and é' })
      .expect(201);
    await api.http.post(`/api/v1/wallet/transactions/${sent.body.transaction.id}/accept`).set(b.headers).expect(200);
    await api.http
      .post('/api/v1/wallet/send')
      .set(a.headers)
      .send({ recipient_pin: b.user.pin_code, amount: 3 })
      .expect(201);
    await api.store.close();
    const f = await FileStore.open(dataDir);
    original = contents(f.dump());
    await f.close();
  });
  afterAll(async () => {
    tmp.cleanup();
  });

  it('import copies every record, reads them back with the start-up checks and says what it compared', async () => {
    const url = await testDatabase();
    const r = await pinbot(['store', 'import', '--data', dataDir, '--url', url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^imported .*data → PostgreSQL schema "pinbot"; read back and compared record by record:/);
    expect(r.stdout).toMatch(/wallet_transactions\s+3\n/);
    expect(r.stdout).toMatch(/money \(cents\): balances 4700 \+ pending 300 = UBI \+ grants 5000 ✓/);
    const pg = await PgStore.open({ url, integrity: dataDirIntegrity });
    expect(contents(pg.dump())).toEqual(original);
    await pg.close();
    // a second import into the same database is refused, and changes nothing
    const again = await pinbot(['store', 'import', '--data', dataDir, '--url', url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(
        String.raw`^pinbot: the PostgreSQL schema "pinbot" is not empty \(transaction ` +
          String.raw`\d+, \d+ records\): import only into an empty database`,
      ),
    );
  });

  it('with store.driver postgres the admin CLI reads the imported users from the database directly', async () => {
    const url = await testDatabase();
    await importDataDir(dataDir, { url });
    const config = join(tmp.dir, 'pg.yaml');
    writeFileSync(config, 'store:\n  driver: postgres\n  url: ${env:DATABASE_URL}\n');
    const list = await pinbot(['users', 'list', '--json', '--config', config, '--data', join(tmp.dir, 'unused')], {
      DATABASE_URL: url,
    });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).users.map((u: { display_name: string }) => u.display_name)).toEqual(['Ann', 'Ben']);
  });

  it(
    'export writes a new data directory that opens with the start-up checks and holds ' +
      'the same records; it refuses a used one',
    async () => {
      const url = await testDatabase();
      await importDataDir(dataDir, { url });
      const out = join(tmp.dir, 'exported');
      const report = await exportDataDir(out, { url });
      expect(report.money).toEqual({ balances: 4700, pending: 300, credits: 5000 });
      const f = await FileStore.open(out, { integrity: dataDirIntegrity });
      expect(contents(f.dump())).toEqual(original);
      await f.close();
      await expect(exportDataDir(out, { url })).rejects.toThrow(/is not empty: export into a new directory/);
    },
  );
});
