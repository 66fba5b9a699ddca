import { contactRoutes } from './contacts/routes.js';
import { introductionRoutes } from './introductions/routes.js';
import { meRoutes } from './me/routes.js';
import { messagingRoutes } from './messaging/routes.js';
import { inboxRoutes } from './messaging/inbox-route.js';
import type { RouteDef } from './route.js';
import { walletRoutes } from './wallet/routes.js';

/** Every /api/v1 route: the router, the OpenAPI document and the authorization tests use this table. */
export const allRoutes: RouteDef[] = [
  ...meRoutes,
  ...walletRoutes,
  ...messagingRoutes,
  ...inboxRoutes,
  ...introductionRoutes,
  ...contactRoutes,
];
