import { request } from 'node:http';
import { Readable } from 'node:stream';

/**
 * `fetch` for a URL whose host is a `*.localhost` name (the console's per-run host name), as a
 * browser sends it: connected to 127.0.0.1, the name in the Host header. Node's resolver does
 * not know `*.localhost` (browsers resolve it themselves) and its fetch ignores a Host header.
 * Never follows redirects (`redirect: 'manual'` as the console tests use it); the body, if any,
 * is a string.
 */
export function hostFetch(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  const u = new URL(url);
  const host = u.hostname.endsWith('.localhost') ? '127.0.0.1' : u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port: Number(u.port),
        path: u.pathname + u.search,
        method: init.method ?? 'GET',
        headers: {
          host: u.host,
          ...(init.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(init.body)) }),
          ...init.headers,
        },
      },
      (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) for (const x of v) headers.append(k, x);
          else if (v !== undefined) headers.set(k, v);
        }
        const status = res.statusCode!;
        const empty = status === 204 || status === 205 || status === 304;
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
