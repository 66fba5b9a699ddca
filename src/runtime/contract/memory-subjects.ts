import type { UserRef } from '../../client/types.js';
import type { TriggerDef } from './types.js';

// Whose memory an event reads and writes (docs/bots.md "Memory"): the person it is about — its
// trigger's actor (the sender of a message or transfer, the recipient who answered the bot's
// transfer, the introducer, the requester, the new contact) — and its conversation, when it has
// one. Events about nobody (schedule, startup, balance.changed) have neither.

/** Whether events of `t` are about a person (`remember`, `memory.KEY` are allowed). */
export const hasPerson = (t: TriggerDef): boolean => typeof t.actor === 'function';

/** Whether events of `t` carry a conversation (`remember: { in: conversation }`, `conversation_memory.KEY`). */
export const hasConversation = (t: TriggerDef): boolean => Object.hasOwn(t.example, 'conversation_id');

/** The PIN of the person an event is about, if any (never the bot itself). */
export function personOf(t: TriggerDef | undefined, event: Record<string, unknown>, me: UserRef): string | undefined {
  const who = t?.actor?.(event, me);
  return who && who.id !== me.id && typeof who.pin_code === 'string' ? who.pin_code : undefined;
}

/** The conversation an event is in, if any. */
export function conversationOf(event: Record<string, unknown>): string | undefined {
  const c = event.conversation_id;
  return typeof c === 'string' && c ? c : undefined;
}

/** The bounds and age of one bot's memory (`memory:` of the bot file). */
export interface MemoryOptions {
  /** Entries older than this (since their last write, clock ms) are gone. */
  ttlMs?: number;
  /** Keys the bot may keep, every person and conversation together. */
  maxKeys: number;
  /** Bytes (JSON of keys and values) the bot may keep. */
  maxBytes: number;
  /** Keys one person (or one conversation) may have. */
  maxKeysPerSubject: number;
  /** Bytes one person (or one conversation) may have. */
  maxBytesPerSubject: number;
}

/** What a bot gets without `memory:` in its file. */
export const DEFAULT_MEMORY: MemoryOptions = {
  maxKeys: 10_000,
  maxBytes: 4_194_304,
  maxKeysPerSubject: 100,
  maxBytesPerSubject: 16_384,
};

/** A memory key: what a template can read as `memory.KEY`. */
export const MEMORY_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
