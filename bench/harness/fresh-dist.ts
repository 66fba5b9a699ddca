import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './paths.js';

/** The newest modification time under `dir`, in ms. Internal. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
  return t;
}

/** dist/ as a user runs it: built again when a source is newer (the bench measures this code). */
export function freshDist(progress: (m: string) => void): void {
  const main = join(REPO, 'dist/cli/main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newest(join(REPO, 'src'))) return;
  progress('building dist/ (npm run build): a source is newer than it');
  const r = spawnSync(process.execPath, ['scripts/build.js'], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}
