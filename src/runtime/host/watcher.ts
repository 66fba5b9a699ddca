import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export interface WatchOptions {
  /** Gather changes for this long before one call (editors save in several steps). Default 200 ms. */
  debounceMs?: number;
  /** Keep the process alive while watching (`pinbot bots run`: the watcher may be all that is left). */
  persistent?: boolean;
}

/**
 * Calls `onChange` (debounced) when bot files are added, changed or removed: every `*.yaml` /
 * `*.yml` of a folder, or only the files named. Editors save in several steps (write a temp
 * file, rename), so changes are gathered for `debounceMs` before one call. Returns the
 * function that stops watching.
 *
 * @example const stop = watchBots('bots', () => host.reload());
 * @example const stop = watchBots(['bots/tip-jar.yaml'], () => host.reload(), { persistent: true });
 */
export function watchBots(
  target: string | readonly string[],
  onChange: () => void,
  opts: WatchOptions | number = {},
): () => void {
  const { debounceMs = 200, persistent = false } = typeof opts === 'number' ? { debounceMs: opts } : opts;
  // explicit files: watch their folders (a file replaced by a rename is seen), filtered to them
  const files = typeof target === 'string' ? undefined : target.map((f) => resolve(f));
  const dirs = files ? [...new Set(files.map((f) => dirname(f)))] : [target as string];
  const names = files ? new Set(files.map((f) => basename(f))) : undefined;
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    try {
      const w = watch(dir, { persistent }, (_event, file) => {
        if (file && (names ? !names.has(String(file)) : !/\.ya?ml$/.test(String(file)))) return;
        clearTimeout(timer);
        timer = setTimeout(onChange, debounceMs);
      });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch {
      // a file system without watch support: reload with `pinbot bots reload`
    }
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
