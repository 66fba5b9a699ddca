/**
 * Paths of `save:` — into a response body (`transaction.id`, `transactions[0].id`, `$.a.b`),
 * or `$status`, `$headers.NAME`; `$body` (or `$`) is the whole body. For events, into the
 * event's fields (`content`, `from.pin_code`).
 */
const SEG = /^([A-Za-z_$][\w$-]*)?((\[\d+\])*)$/;

/** A problem with a save path, or undefined when it is well formed. */
export function checkSavePath(path: string): string | undefined {
  if (path === '$' || path === '$body' || path === '$status') return undefined;
  const rest = path.startsWith('$headers.') ? path.slice(9) : path.replace(/^\$\.?/, '').replace(/^\$body\.?/, '');
  if (path.startsWith('$headers.')) return rest ? undefined : 'expected $headers.NAME';
  if (!rest || !rest.split('.').every((s) => SEG.test(s) && s !== ''))
    return `expected a path like transaction.id or transactions[0].id, found ${JSON.stringify(path)}`;
  return undefined;
}

/** Reads a save path from an answer (`{ status, headers, body }`) or any object (`{ body: event }`). */
export function readPath(
  from: { status?: number; headers?: Record<string, string>; body: unknown },
  path: string,
): unknown {
  if (path === '$status') return from.status;
  if (path === '$' || path === '$body') return from.body;
  if (path.startsWith('$headers.')) return from.headers?.[path.slice(9).toLowerCase()];
  let cur: unknown = from.body;
  const rest = path.replace(/^\$body\.?/, '').replace(/^\$\.?/, '');
  for (const seg of rest.split('.')) {
    const m = /^([^[]*)((\[\d+\])*)$/.exec(seg)!;
    if (m[1]) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[m[1]] : undefined;
    for (const i of m[2]!.match(/\d+/g) ?? []) cur = Array.isArray(cur) ? cur[Number(i)] : undefined;
  }
  return cur;
}
