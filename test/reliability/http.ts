import { Agent, request as httpRequest } from 'node:http';

/** A request as sent on the wire: the harness builds these, including malformed ones. */
export interface WireRequest {
  method: string;
  /** Path and query, sent verbatim (no normalisation, unlike fetch). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * Sends one request with node:http (so paths, methods and bodies go out exactly as given) over a
 * keep-alive agent.
 *
 * @example
 * const res = await send('http://127.0.0.1:3000', { method: 'GET', path: '/healthz', headers: {} });
 */
export async function send(baseUrl: string, req: WireRequest, timeoutMs = 30_000): Promise<WireResponse> {
  try {
    return await sendOnce(baseUrl, req, timeoutMs);
  } catch (err) {
    // A kept-alive socket the server closed after its last answer (e.g. one whose body it did
    // not read): the request never reached it, so sending again is what every client does.
    if ((err as { reusedSocket?: boolean }).reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET')
      return sendOnce(baseUrl, req, timeoutMs);
    throw err;
  }
}

function sendOnce(baseUrl: string, req: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    r.on('timeout', () => r.destroy(new Error(`${req.method} ${req.path} timed out after ${timeoutMs} ms`)));
    r.on('error', (err) => reject(Object.assign(err, { reusedSocket: r.reusedSocket })));
    if (req.body !== undefined) {
      // node frames GET/DELETE bodies only with an explicit length (no chunking by default).
      if (!r.hasHeader('content-length') && !r.hasHeader('transfer-encoding'))
        r.setHeader('content-length', Buffer.byteLength(req.body));
      r.end(req.body);
    } else r.end();
  });
}

/** JSON request helper for well-formed calls (workloads, verification). */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<WireResponse> {
  const headers: Record<string, string> = { ...extra };
  if (key) headers['x-api-key'] = key;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  return send(baseUrl, { method: method.toUpperCase(), path, headers, body: payload });
}
