import { registerBuiltins } from './builtins/index.js';
import { Registry } from './contract/registry.js';
import { askAction } from './define/ask.js';

/**
 * A registry holding every built-in trigger, condition, action and poll source, and `ask`, the
 * step the runtime takes itself (run/ask-step.ts). The one place the built-ins are composed
 * into the runtime: builtins/ is a leaf that nothing else in the runtime imports. Plugins add to
 * the registry they are given.
 *
 * @example const registry = createRegistry(); registry.actions.has('send_money') // true
 */
export function createRegistry(): Registry {
  return registerBuiltins(new Registry(), { ask: askAction });
}
