import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { CACHE, REPO } from './paths.js';

/** Files whose content decides what a generated data set looks like. */
const SOURCES = ['bench/data', 'src/store', 'src/domain', 'src/util'];

function* files(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/**
 * A short hash of the generator, the store and the domain sources plus the parameters: a cached
 * data set is reused only while all of them are unchanged (a changed record shape or snapshot
 * format would otherwise be served from a stale cache). Internal.
 */
function cacheKey(name: string, params: unknown): string {
  const h = createHash('sha256').update(name).update(JSON.stringify(params));
  const all = SOURCES.flatMap((d) => [...files(join(REPO, d))]).sort();
  for (const f of all) h.update(relative(REPO, f)).update(readFileSync(f));
  return h.digest('hex').slice(0, 12);
}

/** A generated data set in the cache: the store directory and what the generator noted. */
export interface Dataset<M> {
  dir: string;
  /** The store's data directory (db.json + journal). Copy it before serving: serving changes it. */
  dataDir: string;
  meta: M;
}

/**
 * Returns the data set `name` with `params`, generating it first if the cache has no current copy.
 * Generation runs `bench/data/generate.ts NAME DIR PARAMS` in a child process, which writes
 * the store through FileStore and the domain functions (never hand-written JSON) and a
 * `meta.json` of what the benches need (API keys, conversation ids). Older copies of the same
 * data set are removed.
 *
 * @example
 * const ds = await dataset<UsersMeta>('users', { users: 100 }, ctx.progress);
 */
export async function dataset<M>(
  name: string,
  params: Record<string, unknown>,
  progress: (msg: string) => void,
): Promise<Dataset<M>> {
  const root = join(CACHE, 'datasets');
  const label = `${name}-${Object.values(params).join('-')}`;
  const dir = join(root, `${label}-${cacheKey(name, params)}`);
  if (!existsSync(join(dir, 'complete'))) {
    mkdirSync(root, { recursive: true });
    for (const old of readdirSync(root))
      if (old.startsWith(`${label}-`)) rmSync(join(root, old), { recursive: true, force: true });
    const partial = `${dir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    progress(`generating data set ${label} (cached under bench/.cache/datasets for later runs)…`);
    const t0 = performance.now();
    await generate(name, partial, params);
    writeFileSync(join(partial, 'complete'), new Date().toISOString() + '\n');
    renameSync(partial, dir);
    progress(`  generated ${label} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return { dir, dataDir: join(dir, 'data'), meta: JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as M };
}

function generate(name: string, dir: string, params: Record<string, unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--max-old-space-size=4096',
        '--max-semi-space-size=64',
        'bin/run-ts.js',
        'bench/data/generate.ts',
        name,
        dir,
        JSON.stringify(params),
      ],
      {
        cwd: REPO,
        stdio: ['ignore', 'inherit', 'pipe'],
      },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`generating ${name} failed (exit ${code}):\n${err}`)),
    );
  });
}

/** Copies a data set's store into `dest` (which must not exist) and returns its size in bytes. */
export function copyStore(ds: Dataset<unknown>, dest: string): number {
  cpSync(ds.dataDir, dest, { recursive: true });
  let bytes = 0;
  for (const f of readdirSync(dest)) bytes += statSync(join(dest, f)).size;
  return bytes;
}
