import type { UserRef } from '../../client/types.js';
import type { LimitScope } from '../define/bot.js';

/**
 * The key a rule's cooldown or throttle counts this event under: the rule's id, plus the
 * sender's PIN (`per: sender`) or the conversation (`per: conversation`; events outside a
 * conversation count by sender). Internal.
 *
 * @example limitKey('human', 'sender', event, alice) // 'human\u0000sender ABC123'
 */
export function limitKey(
  ruleId: string,
  per: LimitScope,
  event: Record<string, unknown>,
  actor: UserRef | undefined,
): string {
  if (per === 'rule') return ruleId;
  const conv = event.conversation_id;
  if (per === 'conversation' && typeof conv === 'string') return `${ruleId}\u0000conversation ${conv}`;
  return `${ruleId}\u0000sender ${actor?.pin_code ?? '-'}`;
}

/** Words for a key in traces ("for ABC123", "in cnv_…"). Internal. */
export function scopeWords(per: LimitScope, key: string): string {
  if (per === 'rule') return 'for this rule';
  return key.includes('\u0000conversation ')
    ? `in ${key.split('\u0000conversation ')[1]}`
    : `for ${key.split('\u0000sender ')[1]}`;
}

/** Starts of recent runs under `key` (throttle), kept to the window. Internal. */
export function recentRuns(
  runs: Record<string, readonly number[]> | undefined,
  key: string,
  now: number,
  withinMs: number,
): number[] {
  return (runs?.[key] ?? []).filter((t) => t > now - withinMs);
}
