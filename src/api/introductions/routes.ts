import type { RouteDef } from '../route.js';

export const introductionRoutes: RouteDef[] = [];
