import { configFrom } from '../../src/config/load.js';
import { systemClock } from '../../src/clock/clock.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser } from '../../src/domain/users/users.js';
import { FileStore } from '../../src/store/file/file-store.js';
import type { Store } from '../../src/store/core/types.js';

/** A generated user and the API key the bench authenticates with. */
export interface BenchUser {
  id: string;
  pin: string;
  name: string;
  key: string;
}

export interface UsersMeta {
  users: BenchUser[];
}

/** Creates `count` users with one key each (in transactions of 500). Internal to bench/data. */
export async function addUsers(store: Store, env: DomainEnv, count: number, prefix = 'bench'): Promise<BenchUser[]> {
  const out: BenchUser[] = [];
  for (let start = 0; start < count; start += 500) {
    const batch = await store.transaction((tx) => {
      const made: BenchUser[] = [];
      for (let i = start; i < Math.min(count, start + 500); i++) {
        const user = createUser(tx, env, { name: `${prefix}-${i}` });
        made.push({ id: user.id, pin: user.pin_code, name: user.display_name, key: createKey(tx, env, user.id).api_key });
      }
      return made;
    });
    out.push(...batch);
  }
  return out;
}

/**
 * The `users` data set: `users` users with a key each, nothing else.
 *
 * @example await generateUsers('bench/.cache/datasets/users-100-…/data', { users: 100 });
 */
export async function generateUsers(dataDir: string, { users }: { users: number }): Promise<UsersMeta> {
  const store = await FileStore.open(dataDir);
  const env: DomainEnv = { clock: systemClock, config: configFrom({}) };
  const made = await addUsers(store, env, users);
  await store.close();
  return { users: made };
}
