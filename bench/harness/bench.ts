import type { Figure } from './figure.js';

/** What every bench is given by bench/run.ts. */
export interface BenchContext {
  /** Measured rounds per variant (at least 3). */
  rounds: number;
  /** Seconds of load per run. */
  durationS: number;
  /** Connections of the load generator. */
  connections: number;
  /** Progress for the operator (stderr); the figures go to stdout. */
  progress(msg: string): void;
}

/** One benchmark: a module of bench/ that returns its figures. */
export interface Bench {
  name: string;
  /** One line for `npm run bench -- --list`. */
  summary: string;
  run(ctx: BenchContext): Promise<Figure[]>;
}

/**
 * Declares a bench.
 *
 * @example
 * export default defineBench({ name: 'read', summary: 'GET /me vs bare express', run: async (ctx) => [...] });
 */
export function defineBench(bench: Bench): Bench {
  return bench;
}
