import { createBotsService } from './bots.js';
import type { ServerService } from './types.js';
import { ubiService } from './ubi.js';

export type { ServerContext, ServerService } from './types.js';

/**
 * The services `pinbot serve` starts after its port is open, in order: UBI, then bots (unless
 * `bots` is false). A new area adds its service here.
 */
export function defaultServices({ bots = true }: { bots?: boolean } = {}): ServerService[] {
  return bots ? [ubiService(), createBotsService()] : [ubiService()];
}
