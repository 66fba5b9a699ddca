/**
 * `pinbot/plugin`: what a plugin author imports. A plugin is a module whose default export is
 * `definePlugin({ … })`; see docs/plugins.md.
 *
 * @example
 * import { definePlugin } from 'pinbot/plugin';
 * export default definePlugin({ name: 'hello', version: '0.1.0', pinbot: '^0.1.0', actions: { … } });
 */
export { definePlugin } from './define.js';
/**
 * Regular expressions for plugins, on the linear-time engine bots use (re2js): matching costs
 * time proportional to the text whatever the pattern, so a pattern from settings or a user
 * cannot stall the process as JavaScript's backtracking `RegExp` can (`^([A-Za-z]+\s?)*$`
 * against 28 letters and a `!` froze the server for seconds). No backreferences, no
 * lookaround. In a configSchema, `{ type: 'string', format: 'regex' }` refuses at load, with
 * its config.yaml:line:col, a pattern this engine cannot run.
 *
 * @example const re = compileRegex('\\b(price|cost)s?\\b', 'i'); re.test('What does it cost?') // true
 */
export { compileRegex, regexProblem, type BotRegex as LinearRegex, type RegexProblem } from '../runtime/index.js';
/**
 * What `ctx.ask` rejects with when its dialog ended without an answer: `reason` is `timeout`,
 * `cancel` (a cancel word) or `invalid_answer` (no valid answer in `attempts`).
 *
 * @example try { await ctx.ask({ question: 'Size?' }) } catch (e) { if (!(e instanceof
 * DialogEnded)) throw e; await ctx.reply('maybe later') }
 */
export { DialogEnded } from '../runtime/index.js';
export type {
  ActionContext,
  Answer,
  AskExpect,
  AskOptions,
  ActionSpec,
  BaseContext,
  BotContext,
  ConditionContext,
  ConditionSpec,
  EventData,
  Infer,
  Json,
  Memory,
  Plugin,
  PluginSpec,
  PluginState,
  PollContext,
  PushEvent,
  RouteHandler,
  RouteRequest,
  RouteResponse,
  Schema,
  SchemaObject,
  ScheduleOptions,
  SetupContext,
  SourceEvent,
  SourceSpec,
  Verdict,
} from './types.js';
export type { Client } from '../client/client.js';
export type { UserRef } from '../client/types.js';
