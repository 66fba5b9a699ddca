import type { Bench } from './harness/bench.js';
import read from './read.js';

/** Every bench, in the order `npm run bench` runs them. */
export const benches: Bench[] = [read];
