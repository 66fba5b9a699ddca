import type { RouteDef } from '../route.js';

export const contactRoutes: RouteDef[] = [];
