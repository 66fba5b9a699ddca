import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type {
  ActionRunContext as RunAction,
  AskRequest,
  ConditionRunContext as RunCondition,
  SourceContext as RunSource,
} from '../runtime/index.js';
import { waitingOffTheClock } from '../util/step-timeout.js';
import type { PluginInstance } from './instance.js';
import { pluginState, SHARED } from './state.js';
import { pluginMemory } from './memory.js';
import type {
  ActionContext,
  ConditionContext,
  Memory,
  EventData,
  PollContext,
  PushEvent,
  RouteHandler,
  SetupContext,
} from './types.js';

/** A wait on the clock that does not count against the call's timeout (held work parks). Internal. */
const parkedSleep = (clock: Clock, signal: AbortSignal) => (ms: number) =>
  waitingOffTheClock(() => clock.sleep(Math.max(0, Number(ms) || 0), signal, { parked: true }));

const noStore = (plugin: string) => {
  throw new Error(`plugin ${plugin}: state is not available here`);
};

/** The context of an action call, from the step's runtime context. */
export function actionContext(inst: PluginInstance, rt: RunAction): ActionContext<unknown> {
  let sent = 0;
  const key = () => `${rt.idempotencyKey}:p${++sent}`.slice(0, 255);
  const o = () => ({ idempotencyKey: key(), signal: rt.signal });
  let log: Logger | undefined;
  let memory: Memory | undefined;
  let conversationMemory: Memory | undefined;
  let writes = 0;
  const nextWrite = () => ++writes;
  // an effect of an action that asks: recorded, so a run again after an answer does not repeat it
  const effect = <T>(name: string, fn: () => Promise<T>): Promise<T> => (rt.dialog ? rt.dialog.effect(name, fn) : fn());
  return {
    plugin: inst.name,
    config: inst.config,
    // made on first use: a pino child costs more than the rest of the context
    get log() {
      return (log ??= rt.log.child({ plugin: inst.name }));
    },
    signal: rt.signal,
    now: () => rt.clock.now(),
    sleep: (ms) => rt.sleepUntil(rt.clock.now() + Math.max(0, Number(ms) || 0)),
    schedule: (cron, fn, opts) => inst.schedule(rt.bot, cron, fn, opts),
    bot: rt.bot,
    api: rt.api,
    me: rt.scope.me,
    state: pluginState(rt.store, inst.name, rt.bot, rt.idempotencyKey, inst.supervision.state),
    event: rt.scope.event as EventData,
    rule: rt.rule,
    get vars() {
      return rt.scope.vars;
    },
    get answers() {
      return { ...rt.scope.answers };
    },
    idempotencyKey: rt.idempotencyKey,
    async reply(text) {
      const target = rt.trigger.replyTo?.(rt.scope.event, rt.scope.me);
      if (!target) throw new Error(`${rt.trigger.name} events have no one to reply to; use ctx.send(pin, text)`);
      const opts = o();
      return effect('reply', () =>
        'conversation_id' in target
          ? rt.api.conversations.send(target.conversation_id, { content: String(text) }, opts)
          : rt.api.messages.send({ recipient_pin: target.pin, content: String(text) }, opts),
      );
    },
    send(pin, text) {
      const opts = o();
      return effect('send', () => rt.api.messages.send({ recipient_pin: String(pin), content: String(text) }, opts));
    },
    async ask(options) {
      if (!rt.dialog) throw new Error(`plugin ${inst.name}: ctx.ask is not available here`);
      const r = await rt.dialog.ask(options as AskRequest);
      const e = (options as { expect?: unknown } | undefined)?.expect;
      // a matches expect gives its named groups
      return (e && typeof e === 'object' && 'matches' in e ? { ...r.groups } : r.value) as never;
    },
    once(name, fn) {
      if (typeof name !== 'string' || name === '') throw new Error('ctx.once: name must be non-empty text');
      return effect(`once:${name}`, async () => fn());
    },
    get memory() {
      return (memory ??= pluginMemory(inst.name, rt, 'person', nextWrite));
    },
    get conversationMemory() {
      return (conversationMemory ??= pluginMemory(inst.name, rt, 'conversation', nextWrite));
    },
  };
}

/** The context of a condition call, from the rule's runtime context. */
export function conditionContext(
  inst: PluginInstance,
  rt: RunCondition,
  signal: AbortSignal,
): ConditionContext<unknown> {
  const bot = rt.scope.bot.name;
  const clock = rt.clock;
  let log: Logger | undefined;
  let state: ReturnType<typeof pluginState> | undefined;
  return {
    plugin: inst.name,
    config: inst.config,
    get log() {
      return (log ??= (rt.log ?? inst.log).child({ plugin: inst.name }));
    },
    signal,
    now: () => (clock ? clock.now() : Date.parse(rt.scope.now)),
    sleep: clock ? parkedSleep(clock, signal) : async () => undefined,
    schedule: (cron, fn, opts) => inst.schedule(bot, cron, fn, opts),
    bot,
    api: rt.api,
    me: rt.scope.me,
    // looked up on use: a call that never touches state must not fail where there is no store
    get state() {
      return (state ??= rt.store
        ? pluginState(rt.store, inst.name, bot, undefined, inst.supervision.state)
        : noStore(inst.name));
    },
    event: rt.scope.event as EventData,
    get vars() {
      return rt.scope.vars;
    },
  };
}

/** The context of a poll call, from the poll's runtime context. */
export function pollContext(inst: PluginInstance, rt: RunSource): PollContext<unknown> {
  const bot = rt.bot ?? '';
  let log: Logger | undefined;
  let state: ReturnType<typeof pluginState> | undefined;
  return {
    plugin: inst.name,
    config: inst.config,
    get log() {
      return (log ??= rt.log.child({ plugin: inst.name }));
    },
    signal: rt.signal,
    now: () => rt.clock.now(),
    sleep: parkedSleep(rt.clock, rt.signal),
    schedule: (cron, fn, opts) => inst.schedule(bot, cron, fn, opts),
    bot,
    api: rt.api,
    me: rt.me,
    get state() {
      return (state ??= rt.store
        ? pluginState(rt.store, inst.name, bot, undefined, inst.supervision.state)
        : noStore(inst.name));
    },
  };
}

/** What the host does for setup contexts (events, listeners, HTTP routes). */
export interface SetupHooks {
  emit(inst: PluginInstance, source: string, event: PushEvent): Promise<string[]>;
  listeners(inst: PluginInstance, source: string): string[];
  route(inst: PluginInstance, method: string, path: string, handler: RouteHandler): void;
}

/** The context of setup, teardown and their jobs: no bot, the plugin's shared state. */
export function setupContext(inst: PluginInstance, hooks: SetupHooks, signal: AbortSignal): SetupContext<unknown> {
  const deps = inst.deps!;
  return {
    plugin: inst.name,
    config: inst.config,
    log: inst.log,
    signal,
    now: () => deps.clock.now(),
    sleep: parkedSleep(deps.clock, signal),
    schedule: (cron, fn, opts) => inst.schedule(SHARED, cron, fn, opts),
    get state() {
      return deps.store
        ? pluginState(deps.store, inst.name, SHARED, undefined, inst.supervision.state)
        : noStore(inst.name);
    },
    emit: (source, event) => hooks.emit(inst, source, event),
    listeners: (source) => hooks.listeners(inst, source),
    route: (method, path, handler) => hooks.route(inst, method, path, handler),
  };
}
