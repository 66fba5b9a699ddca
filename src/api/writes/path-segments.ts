/** A path segment as the literal text it spells when it does not percent-decode. Internal. */
function decodable(segment: string): string {
  try {
    decodeURIComponent(segment);
    return segment;
  } catch {
    return encodeURIComponent(segment);
  }
}

/**
 * Ids are opaque (API.md): a path segment that does not percent-decode (`%ZZ`, `%E0%A4%A`) is
 * the literal text it spells, so `:id` names nothing and the route answers its own not-found
 * code (api/route-table.ts gives such a param as sent), never a 400. This is that path with
 * each such segment percent-encoded, so it decodes to what was sent: what an idempotent write is
 * keyed on (as it was when express matched the routes).
 *
 * @example opaquePath('/api/v1/wallet/transactions/%ZZ/accept') // '/api/v1/wallet/transactions/%25ZZ/accept'
 */
export function opaquePath(path: string): string {
  return path.includes('%') ? path.split('/').map(decodable).join('/') : path;
}
