import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Git-ignored folder for generated data sets and run directories. */
export const CACHE = join(REPO, 'bench', '.cache');

/**
 * A fresh directory for one bench run under bench/.cache/tmp (on the repository's disk, so
 * fsync costs what it costs there, unlike a tmpfs /tmp). Removed by `cleanup`.
 *
 * @example
 * const tmp = runDir('write'); ...; tmp.cleanup();
 */
export function runDir(label: string): { dir: string; cleanup: () => void } {
  const base = join(CACHE, 'tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${label}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
