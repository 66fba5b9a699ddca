import type { JsonSchema, RouteDef } from '../route.js';

/** Descriptions of parameters that mean the same on every route. Internal. */
const COMMON: Record<string, string> = {
  limit: 'Page size: 1–200.',
  pin: 'A PIN (6 characters A-Z 0-9; trimmed and upper-cased before lookup).',
};

/** What the `:id` of a route's path names, from its first path segment. Internal. */
const ID_OF: Record<string, string> = {
  wallet: 'transaction (txn_…)',
  conversations: 'conversation (cnv_…)',
  introductions: 'introduction (int_…)',
  contacts: 'contact entry (con_…, from GET /contacts)',
};

/**
 * The description of a path or query parameter: what the `:id` names, else its schema's
 * description, else what it means on every route. Internal.
 */
export function paramDescription(route: RouteDef, name: string, schema: JsonSchema): string {
  if (name === 'id') {
    const area = route.path.split('/')[1] ?? '';
    const what = route.path.startsWith('/contacts/requests/')
      ? 'contact request (creq_…, from GET /contacts/requests/pending)'
      : (ID_OF[area] ?? 'resource');
    return (
      `The id of a ${what}. An id you cannot see — unknown, of another user, malformed ` +
      `— answers 404 as if it did not exist.`
    );
  }
  if (typeof schema.description === 'string') return schema.description;
  return COMMON[name] ?? name;
}
