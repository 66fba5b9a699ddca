import { runUbi, ubiCents } from '../domain/wallet/ubi.js';
import type { ServerService } from './types.js';

/**
 * The UBI job of `pinbot serve`: on start it catches up every day missed while the server was
 * down, then runs on `ubi.schedule` (node-cron, UTC) — on a virtual clock, at each scheduled
 * time that `pinbot clock advance` passes.
 *
 * @example startServer({ dataDir, services: [ubiService()] })
 */
export function ubiService(): ServerService {
  const running = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    running.add(p);
    void p.finally(() => running.delete(p)).catch(() => undefined);
    return p;
  };
  return {
    name: 'ubi',
    async start({ store, env, scheduler, log }) {
      ubiCents(env); // a bad amount stops start-up with the config key named
      const caught = await track(runUbi(store, env));
      log.info({ credits: caught }, `UBI caught up: ${caught} credit(s)`);
      scheduler.add(
        'ubi',
        env.config.ubi.schedule,
        async (at) => {
          const n = await track(runUbi(store, env));
          log.info({ credits: n, at: at.toISOString() }, `UBI run: ${n} credit(s)`);
        },
        { onError: (err) => log.error({ err }, 'UBI run failed; the next run catches up') },
      );
    },
    async stop() {
      // Let a run in progress finish before the store closes.
      await Promise.allSettled([...running]);
    },
  };
}
