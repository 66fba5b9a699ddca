import { systemClock } from '../clock/clock.js';
import { apiEvents } from './events.js';
import { apiGet } from './http.js';
import type { LoadedScenario } from './load.js';
import type { Target, TargetUser } from './types.js';
import { CLOCK_NEEDS_EMBEDDED } from './steps/clock.js';
import { RESTART_NEEDS_EMBEDDED } from './steps/misc.js';

/**
 * A remote server (`--server URL --keys keys.yaml`): the scenario's users are the keys'
 * owners (looked up with GET /me), time is real, waits sleep, and events are read through the
 * API as the users see them.
 */
export async function remoteTarget(sc: LoadedScenario, baseUrl: string, keys: Record<string, string>): Promise<Target> {
  const base = baseUrl.replace(/\/+$/, '');
  const users: Record<string, TargetUser> = {};
  for (const name of Object.keys(sc.users)) {
    const key = keys[name];
    if (!key) throw new Error(`no API key for user "${name}" in the keys file`);
    let me: { id: string; pin_code: string; display_name: string };
    try {
      me = await apiGet(base, key, '/me');
    } catch (err) {
      throw new Error(`user "${name}": GET /me with their key failed: ${(err as Error).message}`);
    }
    users[name] = { name, id: me.id, pin_code: me.pin_code, display_name: me.display_name, api_key: key };
  }
  return {
    mode: 'remote',
    baseUrl: base,
    users,
    now: () => systemClock.now(),
    wait: (ms) => systemClock.sleep(ms),
    async stepToward(deadline, pollMs) {
      await systemClock.sleep(Math.max(0, Math.min(pollMs, deadline - systemClock.now())));
      return true;
    },
    settle: async () => undefined,
    advanceTo: async () => {
      throw new Error(CLOCK_NEEDS_EMBEDDED);
    },
    restart: async () => {
      throw new Error(RESTART_NEEDS_EMBEDDED);
    },
    events: (kind) => apiEvents(base, users, kind),
    close: async () => undefined,
  };
}
