import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import type { UserRef } from '../../client/types.js';
import { iso, utcDate, type Clock } from '../../clock/clock.js';
import { waitingOffTheClock } from '../../util/step-timeout.js';
import type { CompiledBot } from '../define/bot.js';
import type { Store } from '../../store/core/types.js';
import type { BotState } from '../state/bot-state.js';
import {
  LimitError,
  type ActionRunContext,
  type BotEvent,
  type RunScope,
  type StepDialog,
  type StepMemory,
  type TriggerDef,
} from '../contract/types.js';
import { conversationOf, personOf } from '../contract/memory-subjects.js';
import { BotMemory } from '../state/memory.js';

/**
 * The Idempotency-Key of one step: derived from (bot, rule, event, step and the step's text)
 * only, so a retry —
 * in this process or after a kill -9 and restart — sends the same key and the server replays
 * the first outcome instead of paying or replying twice.
 *
 * @example idempotencyKey('tip-jar', 'thanks', 'transfer.received:txn_1', 1, 'a1b2c3d4') //
 * 'pinbot:tip-jar:thanks:…:1-a1b2c3d4'
 */
export function idempotencyKey(bot: string, rule: string, eventKey: string, step: number, sig = ''): string {
  const h = hash('sha256', eventKey, 'hex').slice(0, 24);
  return `pinbot:${bot}:${rule}:${h}:${step}${sig ? `-${sig}` : ''}`;
}

/** What templates see for an event: its data, plus `type` and `event_id`. */
export function templateEvent(e: BotEvent): Record<string, unknown> {
  return { ...e.payload, type: e.type, event_id: e.key };
}

/**
 * The scope of one run: event, bot, me, vars (read fresh, so a `set` in this or another rule
 * is seen), steps (earlier results), now, and wallet (fetched once, on first use).
 */
export function runScope(o: {
  bot: CompiledBot;
  event: BotEvent;
  me: UserRef;
  state: BotState;
  clock: Clock;
  api: Client;
  steps: unknown[];
  /** Variables set by this run and not written yet. */
  pendingVars?: () => Record<string, unknown> | undefined;
}): RunScope {
  let wallet: Promise<unknown> | undefined;
  const event = templateEvent(o.event);
  let memory: StepMemory | undefined;
  const mem = () =>
    (memory ??= stepMemory({
      bot: o.bot,
      store: o.state.store,
      clock: o.clock,
      trigger: triggerNamed(o.bot, o.event.type),
      event,
      me: o.me,
    }));
  return {
    event,
    bot: { name: o.bot.name },
    me: o.me,
    get vars() {
      const pending = o.pendingVars?.();
      return pending ? { ...o.state.meta().vars, ...pending } : o.state.meta().vars;
    },
    steps: o.steps,
    get now() {
      return iso(o.clock.now());
    },
    get wallet() {
      if (!wallet) {
        wallet = o.api.wallet.balance();
        // read by a synchronous render (a name built at run time, liquid/templates.ts), it is
        // never awaited: its failure must not be an unhandled rejection
        wallet.catch(() => undefined);
      }
      return wallet;
    },
    get memory() {
      return mem().read('person');
    },
    get conversation_memory() {
      return mem().read('conversation');
    },
  };
}

/** The trigger of a bot's rules that events of `type` come from. Internal. */
const triggerNamed = (bot: CompiledBot, type: string) =>
  bot.rules.flatMap((r) => r.triggers).find((t) => t.def.name === type)?.def;

/**
 * The memory of an event's person and conversation (runtime/state/memory.ts), for templates and
 * steps.
 */
export function stepMemory(o: {
  bot: CompiledBot;
  store: Store;
  clock: Clock;
  trigger: TriggerDef | undefined;
  event: Record<string, unknown>;
  me: UserRef;
}): StepMemory {
  const memory = new BotMemory(o.store, o.bot.name, o.bot.memory, () => o.clock.now());
  const person = personOf(o.trigger, o.event, o.me);
  const conversation = conversationOf(o.event);
  const subject = (whose: 'person' | 'conversation') => (whose === 'person' ? person : conversation);
  return {
    person,
    conversation,
    read: (whose) => memory.read(whose, subject(whose)),
    apply(edits, mark) {
      const changes = edits.map((e) => {
        const s = subject(e.in);
        if (!s)
          throw new Error(
            e.in === 'person'
              ? 'this event is about no person: there is no memory to write'
              : 'this event is in no conversation: there is no conversation memory to write',
          );
        return { scope: e.in, subject: s, set: e.set, forget: e.forget };
      });
      return memory.apply(changes, mark);
    },
  };
}

/** Money and variable changes an action asked for, written with its step. */
export interface StepEffects {
  vars?: Record<string, unknown>;
  spendCents?: number;
}

/** What a step's action context is made of (see actionContext). */
export interface ActionContextParts {
  bot: CompiledBot;
  api: Client;
  scope: RunScope;
  trigger: TriggerDef;
  key: string;
  signal: AbortSignal;
  /** The step's logger, made on first use. */
  log: () => Logger;
  clock: Clock;
  rule: string;
  store: Store;
  effects: StepEffects;
  onPark: (parked: boolean) => void;
  /** A plugin step's questions and recorded effects. */
  dialog?: StepDialog;
}

/**
 * The context an action runs with. A class, its lazy parts (memory, the logger) getters of its
 * prototype: an object literal with getters costs a runtime call per getter, per step (bench
 * bots-throughput). `withSignal` gives the same context under another signal (the step's
 * watchdog), its memory shared.
 */
class StepContext implements ActionRunContext {
  readonly api: Client;
  readonly scope: RunScope;
  readonly trigger: TriggerDef;
  readonly idempotencyKey: string;
  readonly clock: Clock;
  readonly bot: string;
  readonly rule: string;
  readonly store: Store;
  readonly dialog?: StepDialog;

  constructor(
    private readonly o: ActionContextParts,
    readonly signal: AbortSignal,
    private readonly lazy: { memory?: StepMemory } = {},
  ) {
    this.api = o.api;
    this.scope = o.scope;
    this.trigger = o.trigger;
    this.idempotencyKey = o.key;
    this.clock = o.clock;
    this.bot = o.bot.name;
    this.rule = o.rule;
    this.store = o.store;
    if (o.dialog) this.dialog = o.dialog;
  }

  withSignal(signal: AbortSignal): StepContext {
    return new StepContext(this.o, signal, this.lazy);
  }

  get memory(): StepMemory {
    const o = this.o;
    return (this.lazy.memory ??= stepMemory({
      bot: o.bot,
      store: o.store,
      clock: o.clock,
      trigger: o.trigger,
      event: o.scope.event,
      me: o.scope.me,
    }));
  }

  get log(): Logger {
    return this.o.log();
  }

  async sleepUntil(until: number): Promise<void> {
    const o = this.o;
    o.onPark(true);
    try {
      await waitingOffTheClock(() => o.clock.sleepUntil(until, o.signal));
    } finally {
      o.onPark(false);
    }
  }

  setVars(patch: Record<string, unknown>): void {
    this.o.effects.vars = { ...this.o.effects.vars, ...patch };
  }

  checkSpend(pin: string, cents: number): void {
    const { limits } = this.o.bot;
    if (limits.sendTo && !limits.sendTo.has(pin)) {
      throw new LimitError(`${pin} is not in limits.send_to`);
    }
    if (limits.maxPerTransfer !== undefined && cents > limits.maxPerTransfer) {
      throw new LimitError(
        `${(cents / 100).toFixed(2)} is more than limits.max_per_transfer ` +
          `(${(limits.maxPerTransfer / 100).toFixed(2)})`,
      );
    }
  }

  reserveSpend(cents: number): void {
    this.o.effects.spendCents = (this.o.effects.spendCents ?? 0) + cents;
  }
}

/**
 * Builds the context an action runs with; `withSignal(s)` gives it under another signal.
 *
 * @example const ctx = actionContext(parts); await action.run(args, ctx.withSignal(stepSignal));
 */
export function actionContext(o: ActionContextParts): ActionRunContext & {
  withSignal(signal: AbortSignal): ActionRunContext;
} {
  return new StepContext(o, o.signal);
}

/** The UTC date of the bot clock, for the daily cap. */
export const spendDate = (clock: Clock) => utcDate(clock.now());
