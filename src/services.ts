import { ubiService } from './domain/wallet/ubi-service.js';
import { createBotsService } from './runtime/service.js';
import type { ServerService } from './server.js';

/**
 * The services every `pinbot serve` starts after its port is open, in order (UBI, bots …).
 * A new area adds its service here.
 */
export const defaultServices: ServerService[] = [ubiService(), createBotsService()];
