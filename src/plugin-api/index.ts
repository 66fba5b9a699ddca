/**
 * `pinbot/plugin`: what a plugin author imports. A plugin is a module whose default export is
 * `definePlugin({ … })`; see docs/plugins.md.
 *
 * @example
 * import { definePlugin } from 'pinbot/plugin';
 * export default definePlugin({ name: 'hello', version: '0.1.0', pinbot: '^0.1.0', actions: { … } });
 */
export { definePlugin } from './define.js';
export type {
  ActionContext,
  ActionSpec,
  BaseContext,
  BotContext,
  ConditionContext,
  ConditionSpec,
  EventData,
  Infer,
  Json,
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
