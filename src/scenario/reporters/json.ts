import type { Reporter } from './types.js';

/** Every result as JSON: `{ summary, scenarios: [{ file, name, status, seed, steps: [...] }] }`. */
export function jsonReporter(write: (text: string) => void): Reporter {
  return { finish: (results, summary) => write(JSON.stringify({ summary, scenarios: results }, null, 2) + '\n') };
}
