import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiRequestError, isTransient, UnauthorizedError } from '../client/errors.js';
import { DialogEnded, LimitError, Suspended, type TraceInfo } from '../runtime/index.js';
import { AbortedError } from '../util/abort.js';
import { pluginScope, StepTimeoutError, withStepTimeout } from '../util/step-timeout.js';

/**
 * The plugin whose code runs now. Every call into a plugin runs inside it, and so do the
 * timers, promises and sockets that code creates: an uncaught error from a plugin's own timer
 * is attributed to it (see guard.ts). It shares its AsyncLocalStorage with the step watchdog
 * (util/step-timeout.ts): on Node 20 each storage costs every async resource of the process.
 */
export { pluginScope };

/** A plugin call that failed: traced with its reason, the plugin and its first own frame. */
export class PluginError extends Error implements TraceInfo {
  constructor(
    readonly traceReason: 'plugin_failed' | 'plugin_timeout' | 'plugin_unavailable',
    readonly plugin: string,
    message: string,
    readonly frame?: string,
  ) {
    super(message);
    this.name = 'PluginError';
  }
}

/** Any thrown value as text (a plugin may throw a string, null, or an object whose toString throws). */
export function describeThrown(err: unknown): string {
  if (err instanceof Error) {
    try {
      return String(err.message) || err.name;
    } catch {
      return 'an Error whose message cannot be read';
    }
  }
  try {
    return `a thrown ${err === null ? 'null' : typeof err}: ${String(err)}`;
  } catch {
    return `a thrown ${typeof err}`;
  }
}

/** A path as the operator reads it: relative to the working directory when inside it. */
export function shortPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') ? rel.split(sep).join('/') : file;
}

/**
 * The first frame of a stack that lies in `roots` (the plugin's file, or its package folder):
 * `plugins/karma.ts:12:5`. Undefined when the stack has none (a hang has no stack).
 */
export function ownFrame(err: unknown, roots: readonly string[]): string | undefined {
  let stack: string | undefined;
  try {
    stack = (err as { stack?: unknown } | null)?.stack as string | undefined;
  } catch {
    return undefined;
  }
  if (typeof stack !== 'string' || roots.length === 0) return undefined;
  for (const line of stack.split('\n')) {
    const m = /(?:\(|at |^)((?:file:\/\/)?\/[^\s()]+?):(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!m) continue;
    let file = m[1]!;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    if (roots.some((r) => file === r || file.startsWith(r.endsWith(sep) ? r : r + sep)))
      return `${shortPath(file)}:${m[2]}:${m[3]}`;
  }
  return undefined;
}

/** Errors that are not the plugin's fault: the API's answers, guardrails, the bot stopping. */
function passesThrough(err: unknown): boolean {
  return (
    err instanceof ApiRequestError ||
    err instanceof UnauthorizedError ||
    err instanceof LimitError ||
    err instanceof AbortedError ||
    // a ctx.ask waiting for its answer, or whose dialog ended: the engine's, not a failure
    err instanceof Suspended ||
    err instanceof DialogEnded ||
    isTransient(err)
  );
}

/** What a call through the boundary needs to know about its plugin. Internal. */
export interface BoundaryTarget {
  readonly name: string;
  /** Files and folders of the plugin's own code (for the first own frame). */
  readonly roots: readonly string[];
  /** Why the plugin cannot be called now (disabled, quarantined), if it cannot. */
  unavailable(): string | undefined;
  /** A call failed (counts towards quarantine, unless `outside`: see BoundaryCallOptions.outside). */
  failed(err: PluginError | StepTimeoutError, outside?: boolean): void;
  /** A call worked (the count of consecutive failures starts again). */
  succeeded(): void;
}

export interface BoundaryCallOptions {
  /** The signal of the seam the call runs in (an action's step, a rule's conditions, a poll). */
  signal?: AbortSignal;
  /** Run under a timeout of its own (setup, teardown, jobs, routes); else the seam's timeout applies. */
  timeoutMs?: number;
  /**
   * The call handles input from outside, which anyone may send (an HTTP route: no key is
   * needed to reach it). Its failures are logged and counted in the plugin's total, but never
   * towards quarantine, and its successes do not clear the count: else five crafted requests
   * would switch the plugin off for every bot until a restart (issue 21, item 1).
   */
  outside?: boolean;
}

/**
 * The one boundary every call into a plugin goes through: the plugin's scope (for attributing
 * its stray errors), a timeout (its own, or the seam's, whose expiry is then marked as the
 * plugin's: `plugin_timeout`), and error capture — a throw or rejection becomes a PluginError
 * (`plugin_failed`) naming the plugin, what was called and the first frame of the plugin's own
 * code. API errors and guardrails pass through unchanged (the bot's step treats them as usual).
 *
 * @example const out = await callPlugin(target, 'action karma.give', (signal) => spec.run(ctx, args), { signal });
 */
export async function callPlugin<T>(
  t: BoundaryTarget,
  what: string,
  fn: (signal: AbortSignal) => T | Promise<T>,
  o: BoundaryCallOptions = {},
): Promise<T> {
  const why = t.unavailable();
  if (why) throw new PluginError('plugin_unavailable', t.name, `plugin ${t.name}: ${what} was not called: ${why}`);
  let timedOut = false;
  const markTimeout = (err: StepTimeoutError) => {
    if (timedOut) return;
    timedOut = true;
    Object.assign(err, { traceReason: 'plugin_timeout', plugin: t.name });
    err.message = `plugin ${t.name}: ${err.message}`;
    t.failed(err, o.outside);
  };
  const run = (signal: AbortSignal) => pluginScope.run(t.name, () => fn(signal));
  const seam = o.signal;
  const onAbort = () => seam?.reason instanceof StepTimeoutError && markTimeout(seam.reason);
  seam?.addEventListener('abort', onAbort, { once: true });
  try {
    const out =
      o.timeoutMs !== undefined
        ? await withStepTimeout(`plugin ${t.name}: ${what}`, o.timeoutMs, run, seam)
        : await run(seam ?? new AbortController().signal);
    if (!o.outside) t.succeeded();
    return out;
  } catch (err) {
    if (err instanceof StepTimeoutError) {
      markTimeout(err);
      throw err;
    }
    if (passesThrough(err)) throw err;
    const frame = ownFrame(err, t.roots);
    const failure = new PluginError(
      'plugin_failed',
      t.name,
      `plugin ${t.name}: ${what} failed: ${describeThrown(err)}${frame ? ` (at ${frame})` : ''}`,
      frame,
    );
    t.failed(failure, o.outside);
    throw failure;
  } finally {
    seam?.removeEventListener('abort', onAbort);
  }
}

/**
 * A value a plugin returned, as JSON data (what the store keeps and templates read). Functions,
 * symbols, cycles, BigInts and throwing getters are refused with a message; `maxBytes` bounds it.
 */
export function asJson(value: unknown, what: string, maxBytes = 65_536): unknown {
  if (value === undefined) return undefined;
  if (typeof value === 'function' || typeof value === 'symbol')
    throw new Error(`${what} returned a ${typeof value}; return JSON data (or nothing)`);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`${what} returned something that is not JSON data (${describeThrown(err)})`);
  }
  if (text === undefined) return undefined;
  if (text.length > maxBytes)
    throw new Error(
      `${what} returned ${Math.round(text.length / 1024)} KB of data; at most ${Math.round(maxBytes / 1024)} KB`,
    );
  return JSON.parse(text);
}
