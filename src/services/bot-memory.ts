import { AdminError, type AdminArgs } from '../admin/commands.js';
import { iso } from '../clock/clock.js';
import { BotMemory, DEFAULT_MEMORY, type MemoryOptions } from '../runtime/index.js';
import type { Store } from '../store/core/types.js';
import { normalizePin } from '../util/pin.js';

// `pinbot bots memory NAME [--person PIN | --conversation ID] [--forget KEY… | --forget-all]`:
// what a bot remembers of people and conversations, and the operator's way to erase it (a
// person asking to be forgotten). The same function answers the running server's admin command
// and the CLI on a stopped one.

/** One subject's memory as the command shows it. */
export interface MemoryShown {
  scope: 'person' | 'conversation';
  subject: string;
  entries: Record<string, { value: unknown; written_at: string }>;
}

/** What `bots.memory` answers. */
/** What `bots.memory` takes: a bot, whose memory (a person's PIN or a conversation), what to forget. */
export interface MemoryArgs extends Record<string, unknown> {
  name: string;
  person?: string;
  conversation?: string;
  forget?: string | string[];
  forget_all?: boolean;
}

export interface MemoryView {
  bot: string;
  /** Keys and bytes the bot keeps, of its bounds. */
  usage: { keys: number; bytes: number; max_keys: number; max_bytes: number; ttl_ms?: number };
  subjects: MemoryShown[];
  /** With --forget: the keys forgotten (`all`) of that subject. */
  forgot?: string[] | 'all';
}

const list = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.map(String)
    : typeof v === 'string' && v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];

/**
 * Shows a bot's memory, of one person or conversation or of everyone; with `forget` (keys, or
 * `forget_all`) of one subject, removes them first, in one durable write.
 *
 * @example await memoryCommand(memory, { name: 'pizza', person: 'ABC123', forget_all: true })
 */
export async function memoryCommand(memory: BotMemory, args: AdminArgs): Promise<MemoryView> {
  const person = typeof args.person === 'string' && args.person.trim() ? normalizePin(args.person) : undefined;
  const conversation =
    typeof args.conversation === 'string' && args.conversation.trim() ? args.conversation.trim() : undefined;
  if (person && conversation) throw new AdminError('give --person or --conversation, not both');
  const keys = list(args.forget);
  const all = args.forget_all === true;
  const subject = person
    ? { scope: 'person' as const, subject: person }
    : conversation
      ? { scope: 'conversation' as const, subject: conversation }
      : undefined;
  let forgot: MemoryView['forgot'];
  if (keys.length || all) {
    if (!subject)
      throw new AdminError(
        '--forget and --forget-all need --person PIN (or --conversation ID): whose memory to forget',
      );
    await memory.apply([{ ...subject, forget: all ? 'all' : keys }]);
    forgot = all ? 'all' : keys;
  }
  const subjects = memory
    .list(subject?.scope)
    .filter((s) => !subject || s.subject === subject.subject)
    .map((s) => {
      const entries = Object.entries(s.entries).map(([k, e]) => [k, { value: e.value, written_at: iso(e.at) }]);
      return { scope: s.scope, subject: s.subject, entries: Object.fromEntries(entries) };
    });
  const o = memory.options;
  const ttl = o.ttlMs !== undefined ? { ttl_ms: o.ttlMs } : {};
  const usage = { ...memory.usage(), max_keys: o.maxKeys, max_bytes: o.maxBytes, ...ttl };
  return { bot: memory.bot, usage, subjects, ...(forgot ? { forgot } : {}) };
}

/** A bot's memory in a store opened by the CLI (no server runs the bot): its file's options, when known. */
export function offlineMemory(
  store: Store,
  bot: string,
  options: MemoryOptions | undefined,
  now: () => number,
): BotMemory {
  return new BotMemory(store, bot, options ?? DEFAULT_MEMORY, now);
}

/** 90d, 2h, 15m, 30s. Internal. */
function duration(ms: number): string {
  for (const [unit, n] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const)
    if (ms >= n) return `${Math.round(ms / n)}${unit}`;
  return `${Math.round(ms / 1000)}s`;
}

/** The text `pinbot bots memory` prints. */
export function formatMemory(v: MemoryView): string {
  const lines: string[] = [];
  if (v.forgot) lines.push(`forgot ${v.forgot === 'all' ? 'every key' : v.forgot.join(', ')}`);
  const u = v.usage;
  const kept = u.ttl_ms !== undefined ? `, entries kept ${duration(u.ttl_ms)} after their last write` : '';
  lines.push(`${v.bot}: ${u.keys} of ${u.max_keys} keys, ${u.bytes} of ${u.max_bytes} bytes${kept}`);
  if (!v.subjects.length) lines.push('  (nothing remembered)');
  for (const s of v.subjects) {
    lines.push(`  ${s.scope} ${s.subject}`);
    for (const [k, e] of Object.entries(s.entries))
      lines.push(`    ${k} = ${JSON.stringify(e.value)}   (written ${e.written_at})`);
  }
  return lines.join('\n');
}
