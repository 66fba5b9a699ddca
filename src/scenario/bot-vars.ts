import { isMap, isScalar, parseDocument, type Document } from 'yaml';
import type { TargetUser } from './types.js';

/**
 * A bot file under test as it is, with a scenario's values: `{ file, as, vars: { … } }`
 * overrides keys of the file's `vars:`, and a value of the bot's `vars:` may name a scenario
 * user — `"{{ users.alice.pin_code }}"` — filled in when the scenario's server loads the bot
 * (the users, and their PINs, exist only then). Only whole references are replaced, by text:
 * nothing is evaluated, and only `pin_code`, `id`, `display_name` and `name` (never a key).
 */
export const USER_REF = /\{\{\s*users\.([A-Za-z][A-Za-z0-9_.-]*?)\.(pin_code|id|display_name|name)\s*\}\}/g;

/** The users named in a value's `{{ users.NAME.FIELD }}` references (with where, for problems). */
export function userRefs(
  value: unknown,
  path: Array<string | number> = [],
): Array<{ user: string; path: Array<string | number> }> {
  if (typeof value === 'string') return [...value.matchAll(USER_REF)].map((m) => ({ user: m[1]!, path }));
  if (Array.isArray(value)) return value.flatMap((v, i) => userRefs(v, [...path, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => userRefs(v, [...path, k]));
  return [];
}

/** Sets `vars.KEY` of a bot file's text for each override (other keys and comments stay). */
export function overrideVars(doc: Document, overrides: Record<string, unknown>): void {
  if (!isMap(doc.get('vars'))) doc.set('vars', doc.createNode({}));
  for (const [k, v] of Object.entries(overrides)) doc.setIn(['vars', k], doc.createNode(v));
}

/** The bot's text with the user references of its `vars:` filled in (unchanged when it has none). */
export function fillUserRefs(text: string, users: Record<string, TargetUser>): string {
  const doc = parseDocument(text);
  const vars = doc.get('vars', true);
  if (doc.errors.length || !isMap(vars)) return text;
  let changed = false;
  const fill = (node: unknown): void => {
    if (isScalar(node) && typeof node.value === 'string' && node.value.search(USER_REF) !== -1) {
      node.value = node.value.replace(USER_REF, (_m, name: string, field: keyof TargetUser | 'name') => {
        const u = users[name];
        if (!u) throw new Error(`the bot's vars name user "${name}", who is not a user of the scenario`);
        return String(u[field]);
      });
      changed = true;
    } else if (node && typeof node === 'object' && 'items' in node) {
      for (const it of (node as { items: unknown[] }).items)
        fill(isScalar(it) || !(it && typeof it === 'object' && 'value' in it) ? it : (it as { value: unknown }).value);
    }
  };
  fill(vars);
  return changed ? doc.toString() : text;
}
