/** The OpenAPI document of /api/v1 (built in openapi/build.ts). */
export { buildOpenApi, operationId, toOpenApi, type OpenApiOptions } from './openapi/build.js';
