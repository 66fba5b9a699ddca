import { defineCollection, type Tx } from '../store/core/types.js';
import type { DomainEnv } from './env.js';
import { DomainError } from './errors.js';

/**
 * What a user keeps in the store that the user chose the size of: the bytes (as stored) of the
 * messages they sent that are still kept, of their transfer notes, introduction messages and
 * group names, and how many groups they created. By user id.
 */
export interface UsageRecord {
  readonly id: string;
  readonly bytes: number;
  readonly groups: number;
}

/** Each user's usage (docs/reliability.md "Round 4"): quotas are checked against it in O(1). */
export const Usage = defineCollection<UsageRecord>({ name: 'user_usage' });

/** What JSON escapes in a string (`"`, `\\`, control characters) or may (lone surrogates). Internal. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The size of a text as the store writes it: UTF-8 in a JSON string (a control character is 6
 * bytes, `\u0001`). A text with nothing JSON escapes (most) is its UTF-8 length, without the
 * JSON string made: this runs on every message write.
 */
export const byteSize = (text: string): number =>
  ESCAPED.test(text) ? Buffer.byteLength(JSON.stringify(text), 'utf8') - 2 : Buffer.byteLength(text, 'utf8');

const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MB`;

/**
 * Counts `bytes` (and `groups` groups) against the user's quota in the same transaction as the
 * write that stores them: over `quotas.bytes_per_user` or `quotas.groups_per_user`, throws
 * 400 `quota_exceeded` naming `path` (the transaction is then not written at all).
 *
 * @example chargeUsage(tx, env, alice.id, byteSize(content), 'body.content')
 */
export function chargeUsage(tx: Tx, env: DomainEnv, userId: string, bytes: number, path: string, groups = 0): void {
  if (bytes === 0 && groups === 0) return;
  const q = env.config.quotas;
  const coll = tx.col(Usage);
  const u = coll.get(userId) ?? { id: userId, bytes: 0, groups: 0 };
  if (groups > 0 && u.groups + groups > q.groups_per_user) {
    throw new DomainError(
      'quota_exceeded',
      `You have created ${u.groups} groups, the most one user may ` +
        `(quotas.groups_per_user is ${q.groups_per_user}); nothing was written. Write ` +
        `in one of your groups, or ask the operator to raise the quota.`,
      [{ path, message: `groups per user: ${u.groups} of ${q.groups_per_user}` }],
    );
  }
  if (bytes > 0 && u.bytes + bytes > q.bytes_per_user) {
    throw new DomainError(
      'quota_exceeded',
      `You keep ${mb(u.bytes)} of messages, notes and names, and this adds ${bytes} ` +
        `bytes: over the ${mb(q.bytes_per_user)} one user may keep ` +
        `(quotas.bytes_per_user); nothing was written. Older messages leave the store ` +
        `as conversations pass quotas.messages_per_conversation; or ask the operator to ` +
        `raise the quota.`,
      [{ path, message: `bytes per user: ${u.bytes} + ${bytes} over ${q.bytes_per_user}` }],
    );
  }
  coll.put({ id: userId, bytes: u.bytes + bytes, groups: u.groups + groups });
}

/** Gives back `bytes` of a user's usage (a message that left the store). */
export function refundUsage(tx: Tx, userId: string, bytes: number): void {
  const coll = tx.col(Usage);
  const u = coll.get(userId);
  if (u && bytes > 0) coll.put({ ...u, bytes: Math.max(0, u.bytes - bytes) });
}
