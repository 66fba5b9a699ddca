import type { Schema } from './schema-types.js';
import { PLUGIN, type Infer, type Plugin, type PluginSpec } from './types.js';

/**
 * Declares a plugin. The arguments of each action and the value of each condition are typed
 * from their JSON Schema, and `ctx.config` from `configSchema`, so an author gets completion
 * and type errors without writing a type twice. The shape is checked again when pinbot loads
 * the plugin (a plain object works too, without the types).
 *
 * @example
 * export default definePlugin({
 *   name: 'karma',
 *   version: '1.0.0',
 *   pinbot: '^0.1.0',
 *   actions: {
 *     give: {
 *       schema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
 *       run: async (ctx, args) => ctx.state.update<number>(args.to, (n = 0) => n + 1),
 *     },
 *   },
 * });
 */
export function definePlugin<
  const CS extends Schema = { type: 'object' },
  const A extends Record<string, Schema> = {},
  const K extends Record<string, Schema> = {},
>(spec: PluginSpec<CS, A, K>): Plugin<Infer<CS>> {
  return Object.freeze({ ...(spec as object), [PLUGIN]: true as const }) as unknown as Plugin<Infer<CS>>;
}
