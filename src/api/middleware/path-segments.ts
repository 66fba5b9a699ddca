import type { RequestHandler } from 'express';

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
 * passed to the route as the literal text it spells, so `:id` names nothing and the route answers
 * its own not-found code. Without this, express throws while matching and the answer is a 400.
 */
export function opaquePathSegments(): RequestHandler {
  return (req, _res, next) => {
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    if (path.includes('%')) {
      const fixed = path.split('/').map(decodable).join('/');
      if (fixed !== path) req.url = fixed + (q === -1 ? '' : req.url.slice(q));
    }
    next();
  };
}
