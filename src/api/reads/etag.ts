import { hash } from 'node:crypto';

/**
 * The entity tag of a response body: a hash of its bytes, so it changes exactly when the body
 * does (a strong validator, RFC 9110 §8.8.3).
 *
 * @example etagOf('{"conversations":[]}') // '"hY4k…"'
 */
export function etagOf(body: string): string {
  // one call, no Hash object: every list read that answers 200 makes a tag
  return `"${hash('sha1', body, 'base64url')}"`;
}

/**
 * Whether an `If-None-Match` header matches `tag`: `*`, or a list of tags, weak or strong
 * (GET compares weakly, RFC 9110 §13.1.2).
 */
export function notModified(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = tag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === bare;
  });
}

/**
 * Whether an `If-None-Match` header is `*` (or holds it): "any version", which says nothing of
 * what the client holds. */
export function matchesAny(ifNoneMatch: string | undefined): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === '*');
}
