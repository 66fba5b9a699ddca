import http from 'node:http';
import https from 'node:https';
import { type RawRequest, type RawResponse, settleOnce } from '../util/request-settle.js';

export type { RawRequest, RawResponse };

/** Sends one request. Rejects on network errors, timeouts and aborts. */
export type Transport = (req: RawRequest) => Promise<RawResponse>;

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** Response headers of node:http, with the Headers-like `get` (joined with ", "). Internal. */
function headerBag(raw: http.IncomingHttpHeaders) {
  return {
    get(name: string): string | null {
      const v = raw[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/**
 * The default transport: node:http(s) with keep-alive agents and one timer per request. It
 * costs less CPU per request than the global fetch (no web streams, no AbortSignal.any), which
 * matters to one process polling for a thousand bots.
 */
export const nodeTransport: Transport = (r) => {
  const url = new URL(r.url);
  const agent = agents[url.protocol as keyof typeof agents];
  if (!agent) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (r.signal?.aborted) return reject(r.signal.reason);
    const finish = settleOnce<RawResponse>(r, resolve, reject, (err) => req.destroy(err));
    const req = mod.request(url, { method: r.method, headers: r.headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', (err) => finish(err));
      res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, headers: headerBag(res.headers), text }));
    });
    req.on('error', (err) => finish(err));
    // the body with `end`: node sends its Content-Length (not chunked), and the server reads a
    // declared body the short way (api/route-pipeline.ts readJson)
    req.end(r.body);
  });
};

/** A transport over a `fetch` function (other runtimes, tests). */
export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async (r) => {
    const timeout = AbortSignal.timeout(r.timeoutMs);
    const res = await fetchFn(r.url, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      signal: r.signal ? AbortSignal.any([r.signal, timeout]) : timeout,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
}
