import { iso } from '../../clock/clock.js';
import type { UserRef } from '../../client/types.js';
import type { BotState } from '../state/bot-state.js';
import type { BotEvent } from '../contract/types.js';
import type { LoopGuardOptions } from '../define/bot.js';

/** A user that bots act as is a machine at any pace: its replies count within this. */
const BOT_REPLY_WITHIN_MS = 60_000;

/** Exchanges followed at once; past this the oldest are forgotten (each is a few numbers). */
const MAX_EXCHANGES = 10_000;

/** One exchange: the bot and one counterpart, in one conversation (or directly). Internal. */
interface Exchange {
  /** Server time of the bot's last answer in this exchange that no reply has been counted against. */
  answeredAt?: number;
  /** Replies in a row that came at machine speed. */
  streak: number;
  /** The last event counted (an event matching two rules counts once). */
  lastEvent?: string;
}

/** What the guard says about an event. */
export interface LoopVerdict {
  until: number;
  /** This event tripped it (log once); otherwise the exchange was paused before. */
  tripped: boolean;
  message: string;
}

/**
 * Stops two bots (or a bot and an auto-responder) from answering each other for ever, without
 * silencing people. It follows each **exchange** — the bot and one counterpart in one
 * conversation (or directly, for events outside a conversation) — and counts the counterpart's
 * **replies to the bot's answers** that came at machine speed: within `replyWithinMs` of the
 * answer in server time (any pace for users that bots act as). A reply that comes slower, or a
 * second event without an answer between, starts the count again. When more than `maxReplies`
 * come in a row, that exchange is paused for `pauseMs` (persisted): its events are traced
 * `loop_suspected` and not run. Other people in the same conversation are other exchanges.
 *
 * @example const v = await guard.check(key, event, fromBot, now); if (v) trace(v.message);
 */
export class LoopGuard {
  private readonly exchanges = new Map<string, Exchange>();

  constructor(
    private readonly o: LoopGuardOptions | undefined,
    private readonly state: BotState,
  ) {}

  /** The exchange an event belongs to: its conversation and who caused it. */
  static keyOf(event: BotEvent, actor: UserRef | undefined): string | undefined {
    if (!actor) return undefined;
    const conv = event.payload.conversation_id;
    return typeof conv === 'string' ? `conversation ${conv} with ${actor.pin_code}` : `user ${actor.pin_code}`;
  }

  /**
   * Whether the event's exchange is paused, or pauses now because this event is one
   * machine-speed reply too many. Counts the event (once, whatever the rules it matches).
   */
  async check(
    key: string | undefined,
    event: BotEvent,
    fromBot: boolean,
    now: number,
  ): Promise<LoopVerdict | undefined> {
    if (!this.o || key === undefined) return undefined;
    const until = this.state.meta().paused?.[key];
    if (until !== undefined && until > now)
      return {
        until,
        tripped: false,
        message: `the exchange in ${key} looked like a loop: paused until ${iso(until)} (loop_guard)`,
      };
    const x = this.exchanges.get(key);
    const ts = event.ts ?? event.at;
    if (!x || x.lastEvent === event.key) return undefined;
    x.lastEvent = event.key;
    if (x.answeredAt === undefined) {
      x.streak = 0; // not a reply to an answer: the bot has not answered since the last one
      return undefined;
    }
    if (ts < x.answeredAt) return undefined; // sent before the answer: no reply to it
    const within = fromBot ? Math.max(BOT_REPLY_WITHIN_MS, this.o.replyWithinMs) : this.o.replyWithinMs;
    const gap = ts - x.answeredAt;
    x.answeredAt = undefined;
    x.streak = gap <= within ? x.streak + 1 : 0;
    if (x.streak <= this.o.maxReplies) return undefined;
    this.exchanges.delete(key);
    const end = now + this.o.pauseMs;
    await this.state.pause(key, end, now);
    return {
      until: end,
      tripped: true,
      message:
        `${key}: ${x.streak} replies in a row came within ${Math.round(within / 1000)} ` +
        `s of the bot's answers (a loop between bots, not a person): paused until ` +
        `${iso(end)} (loop_guard)`,
    };
  }

  /** The bot answered in `key`'s exchange at `at` (server time): the next reply is measured from it. */
  answered(key: string | undefined, at: number): void {
    if (!this.o || key === undefined) return;
    const x = this.exchanges.get(key) ?? { streak: 0 };
    x.answeredAt = Math.max(at, x.answeredAt ?? at);
    // most recently used last: the oldest exchanges are forgotten first
    this.exchanges.delete(key);
    this.exchanges.set(key, x);
    if (this.exchanges.size > MAX_EXCHANGES) this.exchanges.delete(this.exchanges.keys().next().value!);
  }
}

/**
 * When the bot's answer happened in server time: the newest `timestamp` (a message) or
 * `created_at` / `updated_at` (a transaction, a request) of the results of the steps that acted;
 * `fallback` when none says. Internal.
 */
export function answeredAt(results: unknown[], fallback: number): number {
  let at: number | undefined;
  const see = (v: unknown) => {
    const t = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
    if (Number.isFinite(t)) at = Math.max(at ?? t, t);
  };
  for (const r of results) {
    if (!r || typeof r !== 'object') continue;
    const o = r as Record<string, unknown>;
    for (const inner of [o, o.message, o.transaction]) {
      if (!inner || typeof inner !== 'object') continue;
      const i = inner as Record<string, unknown>;
      see(i.timestamp);
      see(i.updated_at ?? i.created_at);
    }
  }
  return at ?? fallback;
}
