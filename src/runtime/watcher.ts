import { existsSync, watch, type FSWatcher } from 'node:fs';

/**
 * Calls `onChange` (debounced) when files of the bots folder are added, changed or removed.
 * Editors save in several steps (write a temp file, rename), so changes are gathered for
 * `debounceMs` before one reload. Returns the function that stops watching.
 *
 * @example const stop = watchBots('bots', () => host.reload());
 */
export function watchBots(dir: string, onChange: () => void, debounceMs = 200): () => void {
  if (!existsSync(dir)) return () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, { persistent: false }, (_event, file) => {
      if (file && !/\.ya?ml$/.test(String(file))) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
    watcher.on('error', () => undefined);
  } catch {
    return () => undefined; // a file system without watch support: reload with `pinbot bots reload`
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
  };
}
