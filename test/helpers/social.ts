import type { ValidateFunction } from 'ajv';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { ERRORS } from '../../src/api/errors.js';
import { allRoutes } from '../../src/api/routes.js';
import { compileResponse } from '../../src/api/validation.js';
import { ContactRequests } from '../../src/domain/contacts/contact-requests.js';
import { Contacts } from '../../src/domain/contacts/contacts.js';
import { Introductions } from '../../src/domain/introductions/introductions.js';
import { ConversationActivity, Conversations, Messages } from '../../src/domain/messaging/collections.js';
import type { CollectionDef, Store, StoredRecord } from '../../src/store/core/types.js';
import type { TestApi } from './api.js';

type Method = 'get' | 'post' | 'delete';
export interface As {
  headers: Record<string, string>;
}

const validators = new Map<string, ValidateFunction>();

/**
 * Checks a response against the contract: a 2xx body matches the route's response schema for
 * that status (so every user object has exactly the API.md shape), an error has the catalogue
 * body with the catalogue status, and nothing is ever 5xx.
 */
export function conform(method: Method, template: string, res: Response): void {
  expect(res.status, `${method.toUpperCase()} ${template} → ${res.status} ${JSON.stringify(res.body)}`).toBeLessThan(
    500,
  );
  if (res.status >= 400) {
    const code = res.body?.error?.code as keyof typeof ERRORS;
    expect(ERRORS[code], `unknown error code ${code}`).toBeDefined();
    expect(res.status).toBe(ERRORS[code][0]);
    expect(typeof res.body.error.message).toBe('string');
    return;
  }
  const route = allRoutes.find((r) => r.method === method && r.path === template);
  if (!route) throw new Error(`no route ${method} ${template}`);
  const schema = route.schemas.responses[res.status];
  expect(schema, `${method} ${template} does not document status ${res.status}`).toBeDefined();
  const key = `${method} ${template} ${res.status}`;
  let v = validators.get(key);
  if (!v) validators.set(key, (v = compileResponse(schema!)));
  expect(v(res.body), `${key}: ${JSON.stringify(v.errors)} in ${JSON.stringify(res.body)}`).toBe(true);
}

export interface CallOptions {
  params?: Record<string, string>;
  body?: unknown;
  query?: string;
  headers?: Record<string, string>;
}

/**
 * A request helper bound to an API: `call(alice, 'post', '/conversations/:id/messages',
 * { params: { id }, body: { content: 'hi' } })`. Every response is checked with `conform`.
 */
export function caller(api: TestApi) {
  return async (as: As, method: Method, template: string, opts: CallOptions = {}): Promise<Response> => {
    const path = template.replace(/:(\w+)/g, (_m, k: string) => encodeURIComponent(opts.params?.[k] ?? ''));
    let req = api.http[method](`/api/v1${path}${opts.query ? `?${opts.query}` : ''}`).set(as.headers);
    if (opts.headers) req = req.set(opts.headers);
    const res = await (opts.body !== undefined ? req.send(opts.body as object) : req);
    conform(method, template, res);
    return res;
  };
}

/** Every record of the messaging, introduction and contact collections, for "nothing changed" checks. */
export function socialState(store: Store): string {
  const out: Record<string, unknown[]> = {};
  for (const def of [
    Conversations,
    ConversationActivity,
    Messages,
    Introductions,
    ContactRequests,
    Contacts,
  ] as unknown as CollectionDef<StoredRecord>[]) {
    out[def.name] = [...store.read.col(def).all()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  return JSON.stringify(out);
}
