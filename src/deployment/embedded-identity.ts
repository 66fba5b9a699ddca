import type { DomainEnv } from '../domain/env.js';
import { authenticate, createKey, Keys, revokeKey } from '../domain/users/keys.js';
import { createUser, findUser, Users, type User } from '../domain/users/users.js';
import { normalizePin } from '../util/pin.js';
import type { ReadView, Store } from '../store/core/types.js';
import { IdentityPending, type IdentityProvider } from '../runtime/index.js';
import { fileKeyVault, type KeyVault } from './bot-key-vault.js';

/** Whether `as:` names this user: its PIN, or its display name (trimmed, any case). Internal. */
const names = (u: User, as: string) =>
  u.pin_code === normalizePin(as) || u.display_name.trim().toLowerCase() === as.trim().toLowerCase();

/**
 * The API key of an embedded bot acting `as:` a user. Each bot keeps one dedicated key: the
 * store holds only its hash (as for every key), the plain key lives in the vault — the bot's key
 * file under the data directory (0600), or with PostgreSQL the store's `bot_keys` — and it is
 * reused across restarts (and moves between processes). A key that was revoked, or that belongs
 * to another user (the file's `as:` changed), is replaced by a new one and the old one revoked.
 * `create_user: true` creates a missing user; otherwise a missing user is IdentityPending (the
 * bot waits and says how to create it).
 *
 * @example const { user, apiKey } = await embeddedKey({ store, env, vault, bot: 'tip-jar', as:
 * 'Tip Jar', createUser: true });
 */
async function embeddedKey(o: {
  store: Store;
  env: DomainEnv;
  vault: KeyVault;
  bot: string;
  as: string;
  createUser: boolean;
}): Promise<{ user: User; apiKey: string; keyId: string; created: boolean }> {
  const saved = await o.vault.get(o.bot);
  const find = (db: ReadView) => {
    // the user this bot resolved before keeps it, by id, while its as: still names it — even
    // when another user has been given the same display name since
    const kept = saved ? db.col(Users).get(saved.user_id) : undefined;
    if (kept && names(kept, o.as)) return kept;
    try {
      return findUser(db, o.as);
    } catch (err) {
      throw new IdentityPending(`as: ${(err as Error).message}`);
    }
  };
  const user = find(o.store.read);
  if (!user && !o.createUser) {
    throw new IdentityPending(
      `no user "${o.as}" on this server. Create it with \`pinbot users add --name ` +
        `"${o.as}"\`, or add create_user: true to the bot file`,
    );
  }
  if (user && saved) {
    const found = authenticate(o.store.read, saved.api_key);
    if (found && found.user.id === user.id) return { user, apiKey: saved.api_key, keyId: found.key.id, created: false };
  }
  const made = await o.store.transaction((tx) => {
    // the user (when missing) and the bot's key in one write; with several processes another
    // one may have made either since the look-up above: then it is used, not made twice
    const u = find(tx) ?? createUser(tx, o.env, { name: o.as });
    const now = o.vault.inTx?.get(tx, o.bot) ?? saved;
    const usable = now && authenticate(tx, now.api_key);
    if (now && usable && usable.user.id === u.id)
      return { u, key: { id: usable.key.id, api_key: now.api_key }, created: false };
    // the old key of this bot is no longer used by anyone: revoke it
    if (now && tx.col(Keys).get(now.key_id)) revokeKey(tx, o.env, now.key_id);
    const key = createKey(tx, o.env, u.id);
    o.vault.inTx?.put(tx, o.bot, { user_id: u.id, key_id: key.id, api_key: key.api_key });
    return { u, key, created: true };
  });
  if (made.created) await o.vault.keep?.(o.bot, { user_id: made.u.id, key_id: made.key.id, api_key: made.key.api_key });
  return { user: made.u, apiKey: made.key.api_key, keyId: made.key.id, created: made.created };
}

/**
 * The identity provider of `pinbot serve`: creates an embedded bot's user (with
 * `create_user: true`) and its dedicated key in the server's store, kept in `vault` (default:
 * the key files of `keysDir`). Bots acting as the same user resolve it one at a time, so a
 * missing user is created once.
 */
export function embeddedIdentity(o: {
  store: Store;
  env: DomainEnv;
  keysDir: string;
  vault?: KeyVault;
}): IdentityProvider {
  const locks = new Map<string, Promise<unknown>>();
  const vault = o.vault ?? fileKeyVault(o.keysDir);
  return {
    async keyFor({ bot, as, createUser }) {
      const lockKey = as.trim().toLowerCase();
      const task = (locks.get(lockKey) ?? Promise.resolve()).then(() =>
        embeddedKey({ store: o.store, env: o.env, vault, bot, as, createUser }),
      );
      const settled = task.catch(() => undefined);
      locks.set(lockKey, settled);
      void settled.then(() => locks.get(lockKey) === settled && locks.delete(lockKey));
      return task;
    },
    ...(vault.isBotUser ? { isBotUser: vault.isBotUser } : {}),
  };
}
