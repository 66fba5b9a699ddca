import type { RouteDef } from '../route.js';

export const walletRoutes: RouteDef[] = [];
