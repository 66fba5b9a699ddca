import { createBotsService } from './bots.js';
import { metricsService } from './metrics.js';
import { pluginsService } from './plugins.js';
import type { ServerService } from './types.js';
import { ubiService } from './ubi.js';

export type { ServerContext, ServerService } from './types.js';

/**
 * The services `pinbot serve` starts after its port is open, in order: UBI, plugins (set up
 * before the bots that use them, torn down after), then bots (unless `bots` is false), then
 * GET /metrics (services/metrics.ts). A new
 * area adds its service here.
 */
export function defaultServices({ bots = true }: { bots?: boolean } = {}): ServerService[] {
  return bots
    ? [ubiService(), pluginsService(), createBotsService(), metricsService()]
    : [ubiService(), pluginsService(), metricsService()];
}
