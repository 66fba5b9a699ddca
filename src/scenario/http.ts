import { injectTraceHeaders, tracingOn } from '../telemetry/tracing.js';

/** One HTTP request of a scenario, as sent. */
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body text, if any. */
  body?: string;
}

/** The answer, with the body parsed as JSON when it is JSON. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

/** Longest real time one request may take before the step fails. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Sends a request and reads the whole answer. Network errors and timeouts throw with the
 * method and URL named.
 */
export async function send(req: SentRequest): Promise<HttpAnswer> {
  let res: Response;
  try {
    // with tracing on, the step's span is the parent of the server's (traceparent)
    const headers = tracingOn() ? { ...req.headers } : req.headers;
    injectTraceHeaders(headers);
    res = await fetch(req.url, {
      method: req.method,
      headers,
      body: req.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new Error(`${req.method} ${req.url} did not answer: ${cause}`);
  }
  const text = await res.text();
  let body: unknown = text;
  if (text && /json/i.test(res.headers.get('content-type') ?? '')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  } else if (!text) body = undefined;
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
  return { status: res.status, headers, body, text };
}

/** GET as a user; throws on a non-2xx answer (the remote event collector uses it). */
export async function apiGet(baseUrl: string, apiKey: string, path: string): Promise<any> {
  const url = `${baseUrl}/api/v1${path}`;
  const a = await send({ method: 'GET', url, headers: { 'X-API-Key': apiKey } });
  if (a.status >= 300) throw new Error(`GET ${path} answered ${a.status}: ${a.text.slice(0, 200)}`);
  return a.body;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The environment variable a curl line reads a user's key from: `PINBOT_KEY_ALICE`. */
export function keyVariable(user: string): string {
  return `PINBOT_KEY_${user.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
}

/**
 * The curl command that repeats a request, with every API key masked: the key header reads
 * from an environment variable named for its user (`$PINBOT_KEY_ALICE`), and any key elsewhere
 * is replaced.
 *
 * @example curlLine(req, { alice: 'pinbot_…' }) // curl -sS -X POST 'http://…' -H "X-API-Key: $PINBOT_KEY_ALICE" …
 */
export function curlLine(req: SentRequest, keys: Record<string, string>): string {
  const envName = keyVariable;
  const maskAll = (s: string, as = (user: string) => `$${envName(user)}`) =>
    Object.entries(keys).reduce((acc, [user, key]) => (key ? acc.split(key).join(as(user)) : acc), s);
  const hidden = (s: string) => maskAll(s, () => '***');
  const parts = ['curl', '-sS', '-X', req.method, quote(hidden(req.url))];
  for (const [k, v] of Object.entries(req.headers)) {
    const masked = maskAll(v);
    // a header that carried a key reads the variable: double quotes so the shell expands it
    parts.push('-H', masked === v ? quote(`${k}: ${v}`) : `"${k}: ${masked.replace(/(["\\`])/g, '\\$1')}"`);
  }
  if (req.body !== undefined) parts.push('--data-raw', quote(hidden(req.body)));
  return parts.join(' ');
}
