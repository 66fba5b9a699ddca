/**
 * `pinbot/testing`: the test kit for bot and plugin authors — an embedded pinbot in the test's
 * process, on a virtual clock, with named users, bots and plugins. See docs/plugins.md.
 *
 * @example
 * import { createTestWorld } from 'pinbot/testing';
 * const world = await createTestWorld({ users: { alice: {}, jar: {} }, plugins: ['plugins/karma.ts'], bots: [yaml] });
 * await world.as('alice').send('jar', 'thanks @bob');
 * await world.advance('5s');
 * expect(await world.inbox('alice')).toHaveLength(1);
 */
export {
  createTestWorld,
  type Actor,
  type TestWorld,
  type TestWorldOptions,
  type UserSpec,
  type WorldUser,
} from './world.js';
export type { PluginReport } from '../plugin-api/host.js';
export type { BotStatus, Trace, TraceStep } from '../runtime/index.js';
export type { Message, Transaction } from '../client/types.js';
