import type { PluginReport } from '../../plugin-api/host.js';

/** The options every plugin command takes (--data, --config). Internal. */
export { common, type DataOptions as Common } from '../output.js';

/** `2 plugins did not load: dice (plugins/dice.ts): why; …` for an exit message. Internal. */
export function notLoaded(invalid: Array<Pick<PluginReport, 'name' | 'source' | 'message'>>): string {
  const one = (p: (typeof invalid)[number]) =>
    `${p.name ? `${p.name} (${p.source})` : p.source}: ${p.message ?? 'invalid'}`;
  return (
    `${invalid.length} plugin${invalid.length === 1 ? '' : 's'} did not load: ` +
    `${invalid.map(one).join('; ')} — fix ${invalid.length === 1 ? 'it' : 'them'} ` +
    `(pinbot plugins list says more), or remove ` +
    `${invalid.length === 1 ? 'it' : 'them'}`
  );
}
