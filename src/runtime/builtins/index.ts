import { answerActions } from './actions/answer.js';
import { askAction } from './actions/ask.js';
import { chooseAction } from './actions/choose.js';
import { localActions } from './actions/local.js';
import { memoryActions } from './actions/memory.js';
import { messageActions } from './actions/messages.js';
import { moneyActions } from './actions/money.js';
import { socialActions } from './actions/social.js';
import { builtinConditions } from './conditions/builtin.js';
import { Registry } from '../contract/registry.js';
import { builtinSources } from './sources/builtin.js';
import { polledTriggers } from './triggers/polled.js';
import { scheduleTrigger, startupTrigger } from './triggers/timed.js';

/**
 * A registry holding every built-in trigger, condition, action and poll source. Plugins add to
 * the registry they are given.
 *
 * @example const registry = createRegistry(); registry.actions.has('send_money') // true
 */
export function createRegistry(): Registry {
  const r = new Registry();
  for (const s of builtinSources) r.addSource(s);
  for (const t of [...polledTriggers, scheduleTrigger, startupTrigger]) r.addTrigger(t);
  for (const c of builtinConditions) r.addCondition(c);
  for (const a of [
    ...answerActions,
    ...messageActions,
    ...moneyActions,
    ...socialActions,
    ...localActions,
    chooseAction,
    askAction,
  ])
    r.addAction(a);
  for (const a of memoryActions) r.addAction(a);
  return r;
}
