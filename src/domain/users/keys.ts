import { hash } from 'node:crypto';
import { fillRandom } from '../../util/random.js';
import { defineCollection, type ReadView, type Tx } from '../../store/core/types.js';
import { newId } from '../../util/ids.js';
import { iso } from '../../clock/clock.js';
import type { DomainEnv } from '../env.js';
import { Users, type User } from './users.js';

export interface ApiKey {
  readonly id: string;
  readonly user_id: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  readonly hash: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
  readonly last_used_at: number | null;
}

export const Keys = defineCollection<ApiKey>({
  name: 'api_keys',
  unique: { hash: (k) => k.hash },
  multi: { user: (k) => k.user_id },
});

export const KEY_PREFIX = 'pinbot_';
const KEY_SHAPE = /^pinbot_[A-Za-z0-9_-]{32}$/;

/** SHA-256 of a key, hex: what is stored and looked up (one call, no Hash object per request). Internal. */
function digest(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Creates a key (192 random bits) for a user; the plain key is returned once, never stored. */
export function createKey(tx: Tx, env: DomainEnv, userId: string): { id: string; api_key: string } {
  const apiKey = KEY_PREFIX + fillRandom(Buffer.alloc(24)).toString('base64url');
  const record = tx.col(Keys).insert({
    id: newId('key'),
    user_id: userId,
    hash: digest(apiKey),
    created_at: env.clock.now(),
    revoked_at: null,
    last_used_at: null,
  });
  return { id: record.id, api_key: apiKey };
}

/** Revokes a key; returns false when there is no such key. Revoking twice is harmless. */
export function revokeKey(tx: Tx, env: DomainEnv, keyId: string): boolean {
  const key = tx.col(Keys).get(keyId);
  if (!key) return false;
  if (key.revoked_at === null) tx.col(Keys).update(keyId, { revoked_at: env.clock.now() });
  return true;
}

/**
 * The last use of one key not yet written (`KeyUsage.use`): a caller that keeps it (the edge,
 * per connection) records a use by setting `at`, with no map lookup, until a flush has taken it
 * (`flushed`): then it asks for the key's current one.
 */
export class KeyUse {
  at = 0;
  flushed = false;
}

/**
 * Remembers when each key was last used without a journal write per request: uses are kept in
 * memory and written in one transaction by `flush()` (periodically and at shutdown).
 */
export class KeyUsage {
  private readonly pending = new Map<string, KeyUse>();

  /** The pending use of a key (made when it has none): set its `at` while it is not `flushed`. */
  use(keyId: string): KeyUse {
    let use = this.pending.get(keyId);
    if (use === undefined) this.pending.set(keyId, (use = new KeyUse()));
    return use;
  }

  /** The last use of a key, counting uses not yet flushed. */
  lastUsed(key: ApiKey): number | null {
    return this.pending.get(key.id)?.at ?? key.last_used_at;
  }

  /** Writes pending uses in one transaction. */
  flush(store: { transaction<R>(fn: (tx: Tx) => R): Promise<R> }): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    // the uses as they are now; a use kept by a caller is taken with them (it asks for a new one)
    const batch: Array<[string, number]> = [];
    for (const [id, use] of this.pending) {
      use.flushed = true;
      batch.push([id, use.at]);
    }
    this.pending.clear();
    return store.transaction((tx) => {
      const keys = tx.col(Keys);
      for (const [id, at] of batch) {
        const k = keys.get(id);
        if (k && (k.last_used_at ?? 0) < at) keys.update(id, { last_used_at: at });
      }
    });
  }
}

/**
 * The user a presented key belongs to, or undefined (malformed, unknown or revoked).
 * The lookup is by the key's SHA-256 digest, never by the key: how long it takes tells a caller
 * nothing of how much of a key was right (a digest sharing its first characters with a stored
 * one says nothing of the key), so a further constant-time compare of the digest the index
 * just matched exactly would add nothing.
 */
export function authenticate(db: ReadView, presented: string): { user: User; key: ApiKey } | undefined {
  const d = keyDigest(presented);
  return d === undefined ? undefined : authenticateDigest(db, d);
}

/** The digest a presented key is looked up by (`authenticateDigest`), or undefined when it is not key-shaped. */
export function keyDigest(presented: string): string | undefined {
  return KEY_SHAPE.test(presented) ? digest(presented) : undefined;
}

/** `authenticate` by the key's digest (`keyDigest`): a caller that kept the digest of a key it saw before. */
export function authenticateDigest(db: ReadView, hashed: string): { user: User; key: ApiKey } | undefined {
  const key = db.col(Keys).one('hash', hashed);
  if (!key || key.revoked_at !== null) return undefined;
  const user = db.col(Users).get(key.user_id);
  return user ? { user, key } : undefined;
}

/**
 * Whether what `authenticateDigest` found is still what it would find: the key's record and its
 * user's are still the stored ones (records are frozen, and a change — a revoke, a rotation, a
 * changed user, a removal — stores a new record or none). Two reads by id instead of the lookup
 * by digest, for a caller that keeps what a key found (api/edge/auth.ts, per connection); the two
 * collections are taken from `db` once (a collection's view reads the live records, so it sees
 * every later write).
 */
export function authChecker(db: ReadView): (found: { user: User; key: ApiKey }) => boolean {
  const keys = db.col(Keys);
  const users = db.col(Users);
  return (found) => keys.get(found.key.id) === found.key && users.get(found.user.id) === found.user;
}

/** The keys of a user as `pinbot keys list` prints them. */
export function listKeys(db: ReadView, userId: string, usage?: KeyUsage) {
  const keys = db.col(Keys);
  return keys.ids('user', userId).map((id) => {
    const k = keys.get(id)!;
    const used = usage ? usage.lastUsed(k) : k.last_used_at;
    return {
      id: k.id,
      created_at: iso(k.created_at),
      last_used_at: used === null ? null : iso(used),
      revoked_at: k.revoked_at === null ? null : iso(k.revoked_at),
    };
  });
}
