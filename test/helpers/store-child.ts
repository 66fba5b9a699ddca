// A child process for crash tests of the file store: node bin/run-ts.js
// test/helpers/store-child.ts MODE DIR [COMPACT_BYTES]
//   burst          — commits transactions forever, 32 in flight; prints `acked ID` once each is durable
//   kill-at:STEP   — commits 200 transactions, then compacts and SIGKILLs itself at STEP
//                    (rotated | snapshot-written); prints `acked ID` for each and `compacting` before
//   open           — opens the store and prints `opened`, or the error message on stderr (exit 1)
import { FileStore, type CompactionStep } from '../../src/store/file/file-store.js';
import { Counters, Items } from './store-fixtures.js';

const [mode = '', dir = '', compact = '4096'] = process.argv.slice(2);
const out = (line: string) => process.stdout.write(line + '\n');

/** One transaction: an item and the counter that must always equal the number of items. */
function addItem(store: FileStore, n: number): Promise<string> {
  return store.transaction((tx) => {
    const id = `item_${String(n).padStart(8, '0')}`;
    tx.col(Items).insert({ id, n, pad: 'x'.repeat(64) });
    const c = tx.col(Counters).get('count');
    tx.col(Counters).put({ id: 'count', value: (c?.value ?? 0) + 1 });
    return id;
  });
}

try {
  if (mode === 'open') {
    const store = await FileStore.open(dir);
    out('opened');
    await store.close();
  } else if (mode === 'burst') {
    const store = await FileStore.open(dir, { compactBytes: Number(compact), warn: () => undefined });
    let n = store.read.col(Items).count();
    const worker = async () => {
      for (;;) out(`acked ${await addItem(store, n++)}`);
    };
    await Promise.all(Array.from({ length: 32 }, worker));
  } else if (mode.startsWith('kill-at:')) {
    const step = mode.slice('kill-at:'.length) as CompactionStep;
    const store = await FileStore.open(dir, {
      compactBytes: 1 << 30,
      hooks: { compaction: (s) => void (s === step && process.kill(process.pid, 'SIGKILL')) },
    });
    const base = store.read.col(Items).count();
    for (let i = 0; i < 200; i++) out(`acked ${await addItem(store, base + i)}`);
    out('compacting');
    // Writes keep arriving during the compaction: they land in the fresh journal.
    const during = [
      store.compact(),
      ...Array.from({ length: 20 }, (_, i) => addItem(store, base + 200 + i).then((id) => out(`acked ${id}`))),
    ];
    await Promise.all(during);
    out('compacted');
    await store.close();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
