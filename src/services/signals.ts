import type { Trace } from '../runtime/index.js';

/** What the parts of a server tell each other as it happens (the console listens). */
export interface SignalMap {
  /** A bot finished evaluating a rule (done, not run, failed…). */
  trace: Trace;
  /** A scheduled job ran (UBI, a bot's schedule, the idempotency sweep), at its due time. */
  job: { name: string; at: string; ok: boolean };
}

/** A small typed publish/subscribe between services of one server. */
export interface Signals {
  on<K extends keyof SignalMap>(topic: K, fn: (value: SignalMap[K]) => void): () => void;
  emit<K extends keyof SignalMap>(topic: K, value: SignalMap[K]): void;
}

/**
 * Creates the signals of a server. A listener that throws is ignored: a signal is news, never
 * part of the work that sent it.
 *
 * @example const s = createSignals(); const off = s.on('trace', (t) => …); s.emit('trace', trace);
 */
export function createSignals(): Signals {
  const listeners = new Map<string, Set<(v: unknown) => void>>();
  return {
    on(topic, fn) {
      let set = listeners.get(topic);
      if (!set) listeners.set(topic, (set = new Set()));
      set.add(fn as (v: unknown) => void);
      return () => void set.delete(fn as (v: unknown) => void);
    },
    emit(topic, value) {
      for (const fn of listeners.get(topic) ?? []) {
        try {
          fn(value);
        } catch {
          // a listener's failure is its own
        }
      }
    },
  };
}
