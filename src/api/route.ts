import type { ReadView, Tx } from '../store/core/types.js';
import type { DomainEnv } from '../domain/env.js';
import type { User } from '../domain/users/users.js';

/** A JSON Schema object (ajv / OpenAPI 3.1 dialect). */
import type { JsonSchema } from '../util/json-schema.js';

export type { JsonSchema };

/** Names of the rate-limit buckets (API.md "Rate limits"); `general` counts every request. */
export type BucketName = 'messages' | 'contacts' | 'intros' | 'groups';

export interface RouteContext<B = any, Q = any, P = any> {
  user: User;
  body: B;
  query: Q;
  params: P;
  env: DomainEnv;
  /** Read access to the store (the committed state). */
  db: ReadView;
}

export interface WriteContext<B = any, Q = any, P = any> extends RouteContext<B, Q, P> {
  /** The transaction this request's writes go into. */
  tx: Tx;
}

export interface RouteResult {
  status: number;
  body: unknown;
  /**
   * A read's body already serialised, `JSON.stringify(body)` exactly (a route that answers the
   * same text for the same record makes it once: `/me`); the pipeline then sends it as it is.
   */
  json?: string;
}

interface RouteBase {
  method: 'get' | 'post' | 'delete';
  /** Express path under /api/v1, e.g. `/wallet/transactions/:id/accept`. */
  path: string;
  summary: string;
  tags: string[];
  /** Extra rate-limit buckets this route counts against. */
  buckets?: BucketName[];
  /**
   * A read that answers `ETag` and honours `If-None-Match` with 304 (no body, counted against
   * the `conditional` bucket instead of `general`): the lists bots poll. Its body must be a
   * function of the store, the user and the request only: while no commit concerns the user,
   * a matching tag is answered without building the body (ChangeCounters).
   */
  etag?: boolean;
  /**
   * With `etag`: the body also depends on the clock (the balance shows subscription days), so
   * its tag is always that of a body built afresh.
   */
  etagSeesClock?: boolean;
  /**
   * Buckets of `buckets` counted only for some requests: checked after the body is parsed, and
   * counted when the predicate holds (`groups` counts group creations, not direct opens).
   */
  bucketWhen?: Partial<Record<BucketName, (body: unknown) => boolean>>;
  schemas: {
    body?: JsonSchema;
    query?: JsonSchema;
    params?: JsonSchema;
    /** Success responses by status, for the OpenAPI document and response checks in tests. */
    responses: Record<number, JsonSchema>;
  };
  /** Error codes this route may answer with, for the OpenAPI document. */
  errors?: string[];
  /** What the operation does, for the OpenAPI document (the summary is the first line). */
  description?: string;
  /** Response headers beyond the common ones, by status (names of openapi/headers.ts RESPONSE_HEADERS). */
  responseHeaders?: Record<number, string[]>;
}

/** A route that reads only. */
export interface ReadRoute extends RouteBase {
  write?: false;
  handler: (ctx: RouteContext) => RouteResult;
}

/**
 * A route that writes: its handler runs inside one store transaction (all-or-nothing) and the
 * response is sent after the commit is durable. POST routes honour `Idempotency-Key`.
 */
export interface WriteRoute extends RouteBase {
  write: true;
  handler: (ctx: WriteContext) => RouteResult;
}

export type RouteDef = ReadRoute | WriteRoute;

/**
 * Declares a route with its schemas beside its handler.
 *
 * @example
 * export const meRoute = defineRoute({
 *   method: 'get', path: '/me', summary: 'Your profile', tags: ['profile'],
 *   schemas: { responses: { 200: { $ref: 'User' } } },
 *   handler: ({ user }) => ({ status: 200, body: publicUser(user) }),
 * });
 */
export function defineRoute<R extends RouteDef>(route: R): R {
  return route;
}
