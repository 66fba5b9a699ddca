import { AsyncLocalStorage } from 'node:async_hooks';

/** A call at a seam (an action, a condition, a poll source, a plugin call) ran out of time. */
export class StepTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(
      `${what} took longer than ${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`} (runtime.step_timeout) and was abandoned`,
    );
    this.name = 'StepTimeoutError';
  }
}

/**
 * The watchdog of one call. It runs on wall time on purpose: it guards against code that hangs,
 * and hung code never lets a virtual clock move. Waits on the clock (a `wait` step, Retry-After,
 * backoff) pause it, so only time spent working counts. Internal.
 */
class Watchdog {
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  private paused = 0;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
  ) {
    this.left = ms;
  }

  start(): void {
    this.since = performance.now();
    this.timer = setTimeout(this.onExpire, this.left);
  }
  pause(): void {
    if (this.paused++ > 0 || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= performance.now() - this.since;
  }
  resume(): void {
    if (--this.paused > 0 || this.left === Infinity) return;
    this.since = performance.now();
    this.timer = setTimeout(this.onExpire, Math.max(0, this.left));
  }
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left = Infinity;
  }
}

/** What a call chain carries: the watchdog of the call it runs in, the plugin whose code runs. Internal. */
interface Scope {
  readonly dog: Watchdog | undefined;
  readonly plugin: string | undefined;
}

/**
 * One AsyncLocalStorage for both: on Node 20, every storage that has run adds its property to
 * every async resource the process makes from then on (each promise, tick, timer and socket
 * write, an HTTP request's too), so two storages cost every request of `serve` twice what one
 * does (bench/read: the async hooks were the largest cost above Fastify's). Internal.
 */
const scope = new AsyncLocalStorage<Scope>();

/**
 * The plugin whose code runs now (plugin-api/boundary.ts), carried through the timers, promises
 * and sockets that code creates as the watchdog is: `run` enters a plugin's scope, `exit` leaves
 * it (the watchdog stays), `getStore` names the plugin. Here, beside the watchdog, so that both
 * share one AsyncLocalStorage.
 */
export const pluginScope = {
  run<R>(plugin: string, fn: () => R): R {
    return scope.run({ dog: scope.getStore()?.dog, plugin }, fn);
  },
  exit<R>(fn: () => R): R {
    const now = scope.getStore();
    return now?.plugin === undefined ? fn() : scope.run({ dog: now.dog, plugin: undefined }, fn);
  },
  getStore(): string | undefined {
    return scope.getStore()?.plugin;
  },
};

/**
 * Runs `fn` under a timeout and an error boundary: a synchronous throw becomes a rejection, and
 * when `ms` of working time pass the returned promise rejects with StepTimeoutError and `fn`'s
 * signal aborts (well-behaved code stops; the rest is abandoned, never awaited again).
 *
 * @example await withStepTimeout('action send_money', 10_000, (signal) => run(signal), botSignal);
 */
export function withStepTimeout<T>(
  what: string,
  ms: number,
  fn: (signal: AbortSignal) => Promise<T> | T,
  parent?: AbortSignal,
): Promise<T> {
  const ac = new AbortController();
  const onParent = () => ac.abort(parent!.reason);
  if (parent?.aborted) ac.abort(parent.reason);
  else parent?.addEventListener('abort', onParent, { once: true });
  return new Promise<T>((resolve, reject) => {
    const dog = new Watchdog(ms, () => {
      const err = new StepTimeoutError(what, ms);
      ac.abort(err);
      reject(err);
    });
    dog.start();
    scope
      .run({ dog, plugin: scope.getStore()?.plugin }, async () => fn(ac.signal))
      .then(resolve, reject)
      .finally(() => {
        dog.stop();
        parent?.removeEventListener('abort', onParent);
      });
  });
}

/**
 * Pauses the timeout of the call this runs in (if any) while `wait` lasts: a wait on the clock
 * is not work. The client's waits and the `wait` action come through here.
 *
 * @example await waitingOffTheClock(() => clock.sleep(ms, signal));
 */
export async function waitingOffTheClock<T>(wait: () => Promise<T>): Promise<T> {
  const dog = scope.getStore()?.dog;
  dog?.pause();
  try {
    return await wait();
  } finally {
    dog?.resume();
  }
}
