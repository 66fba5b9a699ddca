import { answerActions } from './actions/answer.js';
import { chooseAction } from './actions/choose.js';
import { localActions } from './actions/local.js';
import { memoryActions } from './actions/memory.js';
import { messageActions } from './actions/messages.js';
import { moneyActions } from './actions/money.js';
import { socialActions } from './actions/social.js';
import { builtinConditions } from './conditions/builtin.js';
import type { Registry } from '../contract/registry.js';
import type { ActionDef } from '../contract/types.js';
import { builtinSources } from './sources/builtin.js';
import { polledTriggers } from './triggers/polled.js';
import { scheduleTrigger, startupTrigger } from './triggers/timed.js';

/**
 * Adds every built-in trigger, condition, action and poll source to `registry`, and the
 * runtime's own actions (`core.ask`, define/ask.ts) in their place among them: the bot schema
 * lists the actions in this order (and its validator reports in it). Built-ins are written
 * against contract/ as a plugin is, and nothing in the runtime imports them: the composition
 * (runtime/registry.ts, `createRegistry`) registers them.
 *
 * @example registerBuiltins(new Registry(), { ask }).actions.has('send_money') // true
 */
export function registerBuiltins(registry: Registry, core: { ask: ActionDef }): Registry {
  for (const s of builtinSources) registry.addSource(s);
  for (const t of [...polledTriggers, scheduleTrigger, startupTrigger]) registry.addTrigger(t);
  for (const c of builtinConditions) registry.addCondition(c);
  for (const a of [
    ...answerActions,
    ...messageActions,
    ...moneyActions,
    ...socialActions,
    ...localActions,
    chooseAction,
    core.ask,
  ])
    registry.addAction(a);
  for (const a of memoryActions) registry.addAction(a);
  return registry;
}
