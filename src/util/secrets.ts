/**
 * Spotting API keys in text that is about to be logged, whatever the header it came in, its
 * case or its encoding. A key is `pinbot_` + 32 base64url characters (domain/users/keys.ts);
 * anything shaped like one — the prefix in any case followed by 16 or more base64url
 * characters — counts, also after percent-decoding (repeatedly), `\uXXXX` / `\xXX` / HTML
 * character references, or base64 / hex decoding (`Authorization: Basic base64(user:key)`, a
 * cookie holding an encoded token).
 */

const KEY_SHAPED = /pinbot_[A-Za-z0-9_-]{16,}/i;
/** Quick test before the decoding work: the text mentions the prefix, or has encoded bytes or long encoded runs. */
const WORTH_DECODING = /pinbot|%[0-9a-f]{2}|\\u00|\\x|&#|[A-Za-z0-9+/_-]{24,}/i;
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const HEX_RUN = /(?:[0-9a-f]{2}){16,}/gi;

/** Percent-decodes byte by byte (malformed sequences stay as they are). Internal. */
function percentDecode(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** `\u005f`, `\x5f`, `&#95;`, `&#x5f;` → `_`. Internal. */
function unescapeChars(text: string): string {
  return text
    .replace(/\\u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\x([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#x([0-9a-f]{1,6});?/gi, (_m, h: string) => String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff)))
    .replace(/&#(\d{1,7});?/g, (_m, d: string) => String.fromCodePoint(Math.min(Number(d), 0x10ffff)));
}

/** The text as a reader of each encoding would see it. Internal. */
function views(text: string): string[] {
  const out = [text];
  let t = text;
  for (let i = 0; i < 4; i++) {
    const next = unescapeChars(percentDecode(t));
    if (next === t) break;
    out.push((t = next));
  }
  for (const v of [...out]) {
    for (const run of v.match(BASE64_RUN) ?? []) out.push(Buffer.from(run, 'base64').toString('latin1'));
    for (const run of v.match(HEX_RUN) ?? []) out.push(Buffer.from(run, 'hex').toString('latin1'));
  }
  return out;
}

/**
 * True when `text`, read in any of the encodings above, holds something shaped like an API key.
 *
 * @example
 * containsKey('token=pinbot%5FZaMVxT0dG5bYk2pQ8wR1sN3uL6vE9cHj') // true
 */
export function containsKey(text: string): boolean {
  if (!WORTH_DECODING.test(text)) return false;
  return views(text).some((v) => KEY_SHAPED.test(v));
}

/**
 * A bare secret in a URL component: 32 or more base64url characters mixing at least two of
 * upper case, lower case and digits (the part of a key after `pinbot_`, pasted alone). No id of
 * this API looks like that. Internal.
 */
function secretLike(component: string): boolean {
  for (const v of views(component)) {
    for (const run of v.match(/[A-Za-z0-9_-]{32,}/g) ?? []) {
      const classes = Number(/[A-Z]/.test(run)) + Number(/[a-z]/.test(run)) + Number(/[0-9]/.test(run));
      if (classes >= 2) return true;
    }
  }
  return false;
}

/**
 * A URL (path and query) fit for a log line: each path segment, query name and query value
 * that holds a key (or a bare secret) becomes `[redacted]`; the rest is kept as sent.
 *
 * @example
 * redactUrl('/api/v1/me?api_key=pinbot_ZaMV…&limit=2') // '/api/v1/me?api_key=[redacted]&limit=2'
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? undefined : url.slice(q + 1);
  const clean = (part: string) => (containsKey(part) || secretLike(part) ? '[redacted]' : part);
  const outPath = path.split('/').map(clean).join('/');
  if (query === undefined) return outPath;
  const outQuery = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0 ? clean(pair) : `${clean(pair.slice(0, eq))}=${clean(pair.slice(eq + 1))}`;
    })
    .join('&');
  return `${outPath}?${outQuery}`;
}

/**
 * A header value fit for a log line: `[redacted]` when it holds a key, else at most `max`
 * characters (the rest counted, not written).
 *
 * @example
 * logValue('Mozilla/5.0 …', 200)
 */
export function logValue(value: string, max: number): string {
  if (containsKey(value)) return '[redacted]';
  return value.length > max ? `${value.slice(0, max)}…[+${value.length - max}]` : value;
}
