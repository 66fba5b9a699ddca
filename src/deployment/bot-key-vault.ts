import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { authenticate } from '../domain/users/keys.js';
import { isBotName } from '../util/bot-name.js';
import { defineCollection, type ReadView, type Store, type Tx } from '../store/core/types.js';

/** What is kept of an embedded bot's key: the user it acts as, the key's id, the plain key. */
export interface SavedKey {
  user_id: string;
  key_id: string;
  api_key: string;
}

/** A bot's key in the server's store (driver postgres), by bot name. */
export interface BotKey extends SavedKey {
  /** The bot's name. */
  readonly id: string;
}

/**
 * The keys of embedded bots when several processes share a database: every process can run any
 * bot, so the key goes with the bot, not with a process's data directory. Holds plain keys, as
 * the key files do; `multi.user` answers "is this user a bot's?".
 */
export const BotKeys = defineCollection<BotKey>({ name: 'bot_keys', multi: { user: (k) => k.user_id } });

/**
 * Where the plain API keys of embedded bots are kept between starts. The store keeps only the
 * hash of every key; a bot needs the key itself, and reuses it rather than making a new one at
 * each start (or, with several processes, at each move to another process).
 */
export interface KeyVault {
  /** The key kept for a bot, if any. */
  get(bot: string): Promise<SavedKey | undefined>;
  /**
   * Inside the transaction that makes a bot's key: the key kept now (another process may have
   * made one since `get`) and where the new one is recorded, in that same transaction. The
   * transaction may run more than once: only `tx` is touched.
   */
  inTx?: { get(tx: Tx, bot: string): SavedKey | undefined; put(tx: Tx, bot: string, k: SavedKey): void };
  /** After that transaction: keeps the new key (the file vault writes the bot's key file). */
  keep?(bot: string, k: SavedKey): Promise<void>;
  /** Whether a user is one a bot acts as (for `ignore_bots` across processes). */
  isBotUser?(userId: string): boolean;
}

const made = new Set<string>();

/**
 * The keys in `DATA/bots/keys/NAME.json` (mode 0600, folder 0700), one file per bot: the file
 * driver, where one process runs every bot. Files are written atomically and asynchronously
 * (10,000 bots starting at once write theirs on the thread pool, not on the event loop).
 *
 * @example const vault = fileKeyVault('data/bots/keys');
 */
export function fileKeyVault(dir: string): KeyVault {
  return {
    async get(bot) {
      try {
        return JSON.parse(await readFile(join(dir, `${bot}.json`), 'utf8')) as SavedKey;
      } catch {
        return undefined; // none yet, or unreadable: a new key is made
      }
    },
    async keep(bot, k) {
      if (!made.has(dir) || !existsSync(dir)) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        made.add(dir);
      }
      const file = join(dir, `${bot}.json`);
      await writeFile(`${file}.tmp`, JSON.stringify({ user_id: k.user_id, key_id: k.key_id, api_key: k.api_key }), {
        mode: 0o600,
      });
      await rename(`${file}.tmp`, file);
      await chmod(file, 0o600);
    },
  };
}

/**
 * The keys in the server's store (collection `bot_keys`), written in the transaction that makes
 * the key: with PostgreSQL every process sees them, so a bot taken over by another process keeps
 * its key, and two processes starting one bot at once end up with one key. `get` first catches
 * up with every process's commits.
 *
 * @example const vault = storeKeyVault(store);
 */
export function storeKeyVault(store: Store): KeyVault {
  const plain = (k: BotKey | undefined): SavedKey | undefined =>
    k && { user_id: k.user_id, key_id: k.key_id, api_key: k.api_key };
  return {
    async get(bot) {
      await store.durable();
      return plain(store.read.col(BotKeys).get(bot));
    },
    inTx: {
      get: (tx, bot) => plain(tx.col(BotKeys).get(bot)),
      put: (tx, bot, k) =>
        void tx.col(BotKeys).put({ id: bot, user_id: k.user_id, key_id: k.key_id, api_key: k.api_key }),
    },
    isBotUser: (userId) => store.read.col(BotKeys).ids('user', userId).length > 0,
  };
}

/**
 * The key files of a data directory's `bots/keys` that still work in `db` (the key is live and
 * acts as the file's user), as `bot_keys` records: `pinbot store import` carries them into the
 * database, so the bots keep their keys there. Stale or unreadable files are left out (their
 * bots make a new key, as they would have).
 */
export async function keyFilesAsRecords(dir: string, db: ReadView): Promise<BotKey[]> {
  if (!existsSync(dir)) return [];
  const vault = fileKeyVault(dir);
  const out: BotKey[] = [];
  for (const f of readdirSync(dir).sort()) {
    const bot = f.endsWith('.json') && isBotName(f.slice(0, -5)) ? f.slice(0, -5) : undefined;
    const k = bot ? await vault.get(bot) : undefined;
    const found = k && typeof k.api_key === 'string' ? authenticate(db, k.api_key) : undefined;
    if (bot && k && found && found.key.id === k.key_id && found.user.id === k.user_id)
      out.push({ id: bot, user_id: k.user_id, key_id: k.key_id, api_key: k.api_key });
  }
  return out;
}

/**
 * Writes `bot_keys` records as the key files of `dir` (`pinbot store export`: a data directory
 * served with the file driver keeps its bots' keys).
 */
export async function writeKeyFiles(dir: string, records: readonly BotKey[]): Promise<void> {
  const vault = fileKeyVault(dir);
  for (const r of records) await vault.keep!(r.id, r);
}
