import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of pinbot's webhooks, shared by the sender (`webhook`) and the receiver
 * (`webhook_in`), in the shape Stripe uses:
 *
 * ```
 * X-Pinbot-Signature: t=1767258000,v1=c858643d0ebdcaaa85843ca38be128d64072287dd1c5bb8f74f6915885cb8c2d
 * ```
 *
 * `t` is when it was signed (Unix seconds); `v1` is the hex HMAC-SHA256, under the shared secret,
 * of `t`, a line feed, the `Idempotency-Key` header (empty when none is sent), a line feed, and
 * the raw body. A header cannot hold a line feed, so the three parts cannot be shifted into one
 * another. A receiver refuses a `t` too far from its clock, so a captured request cannot be sent
 * again later, nor with another Idempotency-Key. Several `v1=` entries may be sent (while a
 * secret is rotated): one that matches is enough.
 */
export const SIGNATURE_HEADER = 'X-Pinbot-Signature';

/** What a refused signature is told (the same whatever was wrong with it). */
export const SIGNATURE_FORMAT =
  `${SIGNATURE_HEADER} must be t=<Unix seconds>,v1=<hex HMAC-SHA256 of t, a line feed, ` +
  `the Idempotency-Key, a line feed and the body> under the shared secret (see ` +
  `docs/plugins.md "webhook_in")`;

/** The text that is signed. Internal. */
const signedText = (t: number, key: string, body: string | Buffer) =>
  Buffer.concat([Buffer.from(`${t}\n${key}\n`), Buffer.isBuffer(body) ? body : Buffer.from(body)]);

const hmac = (secret: string, t: number, key: string, body: string | Buffer) =>
  createHmac('sha256', secret)
    .update(signedText(t, key, body))
    .digest('hex');

/**
 * The `X-Pinbot-Signature` value for a body sent at `atMs` (ms on the clock) with `key` as its
 * Idempotency-Key (or none).
 *
 * @example sign('shared-secret-0123456789', '{"a":1}', ctx.now(), ctx.idempotencyKey) // 't=1767258000,v1=…'
 */
export function sign(secret: string, body: string | Buffer, atMs: number, key = ''): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${hmac(secret, t, key, body)}`;
}

/** Why a signature was refused (`bad_signature`: not ours; `stale_signature`: too old or too new). */
export interface SignatureProblem {
  ok: false;
  code: 'bad_signature' | 'stale_signature';
  message: string;
}

/** A good signature: `id` names it however the header was written (spaces, order), to remember it. */
export interface SignatureMatch {
  ok: true;
  id: string;
}

/**
 * Checks `header` for `body` and `key` at `nowMs`, in constant time per `v1`: the match, or why
 * not. `toleranceS` is how far `t` may be from the clock, either way.
 *
 * @example verify(secret, req.body, req.headers['idempotency-key'], req.headers['x-pinbot-signature'], ctx.now(), 300)
 */
export function verify(
  secret: string,
  body: Buffer,
  key: string | undefined,
  header: string | undefined,
  nowMs: number,
  toleranceS: number,
): SignatureProblem | SignatureMatch {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of (header ?? '').split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) v1.push(value);
  }
  const bad: SignatureProblem = { ok: false, code: 'bad_signature', message: SIGNATURE_FORMAT };
  if (t === undefined || v1.length === 0 || v1.length > 8) return bad;
  const skew = Math.abs(nowMs / 1000 - t);
  if (skew > toleranceS)
    return {
      ok: false,
      code: 'stale_signature',
      message:
        `the request was signed at t=${t}, ${Math.round(skew)} s from the server's ` +
        `time; at most ${toleranceS} s either way — sign each attempt when it is sent`,
    };
  const want = Buffer.from(hmac(secret, t, key ?? '', body), 'hex');
  const match = v1.find((v) => timingSafeEqual(Buffer.from(v, 'hex'), want));
  return match ? { ok: true, id: `${t}:${match}` } : bad;
}
