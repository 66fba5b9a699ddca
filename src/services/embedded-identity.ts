import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DomainEnv } from '../domain/env.js';
import { authenticate, createKey, Keys, revokeKey } from '../domain/users/keys.js';
import { createUser, findUser, type User } from '../domain/users/users.js';
import type { Store } from '../store/types.js';
import { IdentityPending } from '../runtime/bot-runner.js';
import type { IdentityProvider, StateStores } from '../runtime/host-deps.js';
import { botStateStores } from './state-stores.js';

/** What is kept of an embedded bot's key, in `DATA/bots/keys/NAME.json` (mode 0600). */
interface KeyFile {
  user_id: string;
  key_id: string;
  api_key: string;
}

/**
 * The API key of an embedded bot acting `as:` a user. Each bot keeps one dedicated key: the
 * store holds only its hash (as for every key), the plain key lives in the bot's key file under
 * the data directory (0600), and it is reused across restarts. A key that was revoked, or that
 * belongs to another user (the file's `as:` changed), is replaced by a new one and the old one
 * revoked. `create_user: true` creates a missing user; otherwise a missing user is
 * IdentityPending (the bot waits and says how to create it).
 *
 * @example const { user, apiKey } = await embeddedKey({ store, env, keysDir, bot: 'tip-jar', as: 'Tip Jar', createUser: true });
 */
async function embeddedKey(o: { store: Store; env: DomainEnv; keysDir: string; bot: string; as: string; createUser: boolean }): Promise<{ user: User; apiKey: string; created: boolean }> {
  let user: User | undefined;
  try {
    user = findUser(o.store.read, o.as);
  } catch (err) {
    throw new IdentityPending(`as: ${(err as Error).message}`);
  }
  if (!user) {
    if (!o.createUser) {
      throw new IdentityPending(`no user "${o.as}" on this server. Create it with \`pinbot users add --name "${o.as}"\`, or add create_user: true to the bot file`);
    }
    // the user and the bot's key in one write
    const made = await o.store.transaction((tx) => {
      const u = createUser(tx, o.env, { name: o.as });
      return { u, key: createKey(tx, o.env, u.id) };
    });
    saveKeyFile(o.keysDir, o.bot, { user_id: made.u.id, key_id: made.key.id, api_key: made.key.api_key });
    return { user: made.u, apiKey: made.key.api_key, created: true };
  }
  const file = join(o.keysDir, `${o.bot}.json`);
  let saved: KeyFile | undefined;
  if (existsSync(file)) {
    try {
      saved = JSON.parse(readFileSync(file, 'utf8')) as KeyFile;
    } catch {
      saved = undefined;
    }
  }
  if (saved) {
    const found = authenticate(o.store.read, saved.api_key);
    if (found && found.user.id === user.id) return { user, apiKey: saved.api_key, created: false };
  }
  const u = user;
  const key = await o.store.transaction((tx) => {
    // the old key of this bot is no longer used by anyone: revoke it
    if (saved && tx.col(Keys).get(saved.key_id)) revokeKey(tx, o.env, saved.key_id);
    return createKey(tx, o.env, u.id);
  });
  saveKeyFile(o.keysDir, o.bot, { user_id: user.id, key_id: key.id, api_key: key.api_key });
  return { user, apiKey: key.api_key, created: true };
}

/** Writes a bot's key file atomically, readable by the owner only. Internal. */
function saveKeyFile(dir: string, bot: string, k: KeyFile): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${bot}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(k), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  chmodSync(file, 0o600);
}

/**
 * The identity provider of `pinbot serve`: creates an embedded bot's user (with
 * `create_user: true`) and its dedicated key in the server's store. Bots acting as the same
 * user resolve it one at a time, so a missing user is created once.
 */
export function embeddedIdentity(o: { store: Store; env: DomainEnv; keysDir: string }): IdentityProvider {
  const locks = new Map<string, Promise<unknown>>();
  return {
    async keyFor({ bot, as, createUser }) {
      const lockKey = as.trim().toLowerCase();
      const task = (locks.get(lockKey) ?? Promise.resolve()).then(() => embeddedKey({ ...o, bot, as, createUser }));
      const settled = task.catch(() => undefined);
      locks.set(lockKey, settled);
      void settled.then(() => locks.get(lockKey) === settled && locks.delete(lockKey));
      return task;
    },
  };
}

/**
 * What a BotHost inside a server is given: the embedded server (its URL and identity provider)
 * and the bots' state stores (the server's own store; a file store for remote bots).
 *
 * @example new BotHost({ ...embeddedHostDeps({ store, env, url, stateDir }), registry, log, clock, scheduler, stateDir, dir })
 */
export function embeddedHostDeps(o: { store: Store; env: DomainEnv; url: string; stateDir: string }): { embedded: { url: string; identity: IdentityProvider }; stateStores: StateStores } {
  return {
    embedded: { url: o.url, identity: embeddedIdentity({ store: o.store, env: o.env, keysDir: join(o.stateDir, 'keys') }) },
    stateStores: botStateStores({ embedded: o.store, stateDir: o.stateDir }),
  };
}
