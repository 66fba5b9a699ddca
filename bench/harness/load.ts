import { spawn, type ChildProcess } from 'node:child_process';
import { detectCores } from './cores.js';
import type { LoadResult, LoadSpec } from './load-spec.js';
import { REPO } from './paths.js';

export type { LoadRequest, LoadResult, LoadSpec } from './load-spec.js';

let child: ChildProcess | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

/** The long-lived autocannon process on the load CPU, started on first use. Internal. */
function generator(): ChildProcess {
  if (child) return child;
  const [cmd, args] = detectCores().wrap('load', process.execPath, ['bin/run-ts.js', 'bench/harness/load-child.ts']);
  const c = spawn(cmd, args, { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  c.on('message', (msg: { id: number; result?: LoadResult; error?: string }) => {
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.result) w?.resolve(msg.result);
    else w?.reject(new Error(`load generator: ${msg.error}`));
  });
  c.once('exit', (code) => {
    child = undefined;
    for (const w of waiting.values()) w.reject(new Error(`load generator exited (${code})`));
    waiting.clear();
  });
  // The harness must be able to exit while the generator idles.
  c.unref();
  c.channel?.unref();
  child = c;
  return c;
}

/**
 * Runs autocannon in the load generator process (on the load CPU) and returns what it
 * measured. Throws when the generator fails; a run with errors or non-2xx answers is returned
 * as is (the caller decides whether that invalidates the figure).
 *
 * @example
 * const r = await runLoad({ url, connections: 50, durationS: 4, requests: [{ method: 'GET', path: '/healthz' }] });
 */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const c = generator();
  const id = nextId++;
  return new Promise<LoadResult>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    c.channel?.ref();
    c.send({ id, spec });
  }).finally(() => {
    if (waiting.size === 0) c.channel?.unref();
  });
}

/** Stops the load generator (the harness calls this before it exits). */
export function stopLoad(): void {
  child?.disconnect();
}

/** A one-line summary of what went wrong in a run, or undefined when every answer was 2xx. */
export function loadProblem(r: LoadResult): string | undefined {
  if (r.total === 0) return 'no request completed';
  if (r.errors > 0 || r.non2xx > 0) {
    const codes = Object.entries(r.statusCodes)
      .filter(([c]) => !c.startsWith('2'))
      .map(([c, n]) => `${n}×${c}`)
      .join(', ');
    return `${r.errors} errors (${r.timeouts} timeouts), ${r.non2xx} non-2xx${codes ? ` (${codes})` : ''}`;
  }
  return undefined;
}
