import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { jsonReporter } from './json.js';
import { junitReporter } from './junit.js';
import { tapReporter } from './tap.js';
import type { Reporter } from './types.js';

export const REPORTERS = ['junit', 'tap', 'json'] as const;
export type ReporterName = (typeof REPORTERS)[number];

const toFile = (file: string) => (text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

/**
 * A file report by name: `junit` (needs a file), `tap` or `json` (to the file, or to stdout
 * when none is given).
 */
export function fileReporter(name: ReporterName, output: string | undefined): Reporter {
  if (name === 'junit') {
    if (!output)
      throw new Error('--reporter junit needs --output FILE (e.g. --reporter junit --output reports/scenarios.xml)');
    return junitReporter(output);
  }
  const write = output ? toFile(output) : (t: string) => void process.stdout.write(t);
  return name === 'tap' ? tapReporter(write) : jsonReporter(write);
}

export { consoleReporter } from './console.js';
export type { Reporter, Summary } from './types.js';
