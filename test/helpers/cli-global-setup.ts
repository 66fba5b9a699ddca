import { existsSync, readFileSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { buildInputsHash, distStamp } from '../../scripts/build-inputs.js';
import { ROOT } from './spawn.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * PINBOT_FROM_SOURCE for the CLIs the tests spawn (bin/pinbot.js): '0' runs dist/, proven
     * built from the current sources; '1' runs src/ through tsx.
     */
    pinbotFromSource: '0' | '1';
  }
}

/** Whether dist/ was built by scripts/build.js from exactly the sources now in the checkout. */
export function distIsFresh(root: string = ROOT): boolean {
  const stamp = distStamp(root);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === buildInputsHash(root);
}

let told = false;

/** Decides how the spawned CLIs run, and tells the workers (test/helpers/fresh-modules.ts). */
function decide(project: TestProject): void {
  // PINBOT_FROM_SOURCE=1 npx vitest run …: src/ through tsx, whatever dist/ is
  const fresh = process.env.PINBOT_FROM_SOURCE !== '1' && distIsFresh();
  project.provide('pinbotFromSource', fresh ? '0' : '1');
  if (!fresh && !told && process.env.PINBOT_FROM_SOURCE !== '1') {
    told = true;
    console.log(
      'pinbot tests: dist/ is not built from the current sources, so the CLIs the tests spawn ' +
        'run src/ through tsx (slower); `npm run build` first to spawn the compiled CLI instead',
    );
  }
}

/**
 * Global setup of every test project. Many tests spawn `bin/pinbot.js`; run from src/ each
 * start pays for tsx (its loader thread, every module resolved through it) and for compiling
 * the built-in schemas' validators: about 3× the CPU of the compiled CLI. So when dist/ carries
 * the stamp of a build from exactly the current sources (scripts/build-inputs.js: after
 * `npm ci`, whose `prepare` builds, or `npm run build`), the spawned CLIs run dist/; else src/,
 * as before — never a stale dist/. Checked again before each rerun of watch mode, since an edit
 * makes dist/ stale. The tests' own imports are src/ either way (vitest.config.ts's aliases).
 */
export default function setup(project: TestProject): void {
  decide(project);
  project.onTestsRerun(() => decide(project));
}
