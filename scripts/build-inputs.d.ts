/** The hash of what `scripts/build.js` in `root` builds dist/ from (scripts/build-inputs.js). */
export function buildInputsHash(root: string): string;
/** Where the hash of the checkout's dist/ is kept (outside dist/, so it never ships). */
export function distStamp(root: string): string;
