/**
 * Finds the route of a request by a table lookup instead of trying each route in turn (an
 * express router runs every layer's regular expression until one matches: a tenth of the CPU
 * of `GET /me` under load, bench/read). Matching follows what express's router did, so no
 * client sees a difference: literal segments match in any case, one trailing slash is allowed,
 * a `:param` is one non-empty segment, percent-decoded, and `HEAD` is answered by the `GET`
 * route.
 *
 * @example
 * const table = new RouteTable([{ method: 'get', path: '/me', value: meRoute }]);
 * table.match('GET', '/ME/') // { value: meRoute, params: {} }
 */
export class RouteTable<V> {
  /** Routes without params by method, then by lower-case path. */
  private readonly exact = new Map<string, Map<string, { value: V; params: Record<string, string> }>>();
  /**
   * Routes with params by method, then by segment count (no key string made per request), each
   * literal segment lower-cased. */
  private readonly shaped = new Map<
    string,
    Map<number, Array<{ segments: Array<string | { param: string }>; value: V }>>
  >();
  /** `exact`'s GET routes, found without a lookup by method (most requests are GETs). */
  private readonly gets: Map<string, { value: V; params: Record<string, string> }> | undefined;

  constructor(routes: ReadonlyArray<{ method: string; path: string; value: V }>) {
    for (const r of routes) {
      const method = r.method.toUpperCase();
      const parts = r.path.split('/').slice(1);
      if (!parts.some((p) => p.startsWith(':'))) {
        const byPath = this.exact.get(method) ?? new Map<string, { value: V; params: Record<string, string> }>();
        this.exact.set(method, byPath);
        // the first route declared wins, as in express; its match is one object, made here
        if (!byPath.has(r.path.toLowerCase())) byPath.set(r.path.toLowerCase(), { value: r.value, params: NO_PARAMS });
        continue;
      }
      const byCount = this.shaped.get(method) ?? new Map();
      this.shaped.set(method, byCount);
      const list = byCount.get(parts.length) ?? [];
      list.push({
        segments: parts.map((p) => (p.startsWith(':') ? { param: p.slice(1) } : p.toLowerCase())),
        value: r.value,
      });
      byCount.set(parts.length, list);
    }
    this.gets = this.exact.get('GET');
  }

  /**
   * The route for `method` and `path` (a pathname, no query), with its params decoded; undefined
   * when none matches (the caller answers 404). A route without params answers the same object
   * every time (not to be changed). A param that does not percent-decode is given
   * as sent (ids are opaque: it then names nothing).
   */
  match(method: string, path: string): Readonly<{ value: V; params: Record<string, string> }> | undefined {
    const m = method === 'HEAD' ? 'GET' : method;
    // one trailing slash is allowed (`/me/`), as express's non-strict routing did
    const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const byPath = m === 'GET' ? this.gets : this.exact.get(m);
    // as sent first: clients write paths in lower case
    const exact = byPath && (byPath.get(p) ?? byPath.get(p.toLowerCase()));
    if (exact !== undefined) return exact;
    const parts = p.split('/');
    const list = this.shaped.get(m)?.get(parts.length - 1);
    if (!list || parts[0] !== '') return undefined;
    outer: for (const r of list) {
      const params: Record<string, string> = {};
      for (let i = 0; i < r.segments.length; i++) {
        const want = r.segments[i]!;
        const got = parts[i + 1]!;
        if (typeof want === 'string') {
          // as sent first (clients write paths in lower case): no new string
          if (want !== got && want !== got.toLowerCase()) continue outer;
        } else {
          if (got === '') continue outer;
          params[want.param] = decodeSegment(got);
        }
      }
      return { value: r.value, params };
    }
    return undefined;
  }
}

/** The params of a route that has none (shared: nothing writes to it). Internal. */
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** A path segment percent-decoded, or as sent when it does not decode. Internal. */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
