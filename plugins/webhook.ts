import { definePlugin } from 'pinbot/plugin';
import { sign } from './lib/webhook-signature.js';

/** Statuses worth another attempt: the receiver may answer later. Internal. */
const RETRY = new Set([408, 425, 429, 500, 502, 503, 504]);

export { sign as signature, verify } from './lib/webhook-signature.js';

/**
 * webhook: forwards events to an HTTP endpoint. Each delivery is a POST of JSON (the event, or
 * `body`) signed with HMAC-SHA256 (`X-Pinbot-Signature: t=…,v1=…`: the time of the attempt,
 * the step's `Idempotency-Key` and the body; what `webhook_in` checks, see
 * lib/webhook-signature.ts), carrying that `Idempotency-Key` (the same on every attempt and
 * after a restart, so a receiver can drop repeats). Each attempt is signed when it is sent, so
 * a retry after a long backoff is not refused as stale. A network error, a timeout or a
 * 408/425/429/5xx answer is retried with doubling
 * backoff on the shared clock; any other answer ends the step.
 *
 * ```yaml
 * - on: [message.received, transfer.received]     # the events to forward
 *   do:
 *     - webhook.post: { url: "https://example.com/hooks/pinbot" }
 * ```
 */
export default definePlugin({
  name: 'webhook',
  version: '1.0.0',
  pinbot: '^0.1.0',
  description: 'Forwards events to an HTTP URL, signed (HMAC-SHA256), with retries and an idempotency key.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      url: { type: 'string', description: 'where to POST when the step gives no url' },
      secret: {
        type: 'string',
        minLength: 16,
        description: 'the shared HMAC-SHA256 key, e.g. "${env:WEBHOOK_SECRET}"',
      },
      timeout_ms: { type: 'integer', minimum: 1, default: 5000, description: 'time one attempt may take' },
      retries: { type: 'integer', minimum: 0, maximum: 10, default: 4, description: 'attempts after the first' },
      backoff_ms: {
        type: 'integer',
        minimum: 1,
        default: 1000,
        description: 'wait before the first retry (doubling after)',
      },
    },
  },
  actions: {
    post: {
      description:
        'POSTs the event (or body) as signed JSON to url (default plugins.config.webhook.url), retrying with backoff.',
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          url: { type: 'string', pattern: '^https?://', description: 'the endpoint (a template)' },
          body: { description: 'what to send (default: the event)' },
        },
      },
      example: { url: 'https://example.com/hooks/pinbot' },
      async run(ctx, args) {
        const url = args.url ?? ctx.config.url;
        if (!url) throw new Error('no url: give url in the step, or plugins.config.webhook.url in config.yaml');
        if (!ctx.config.secret)
          throw new Error(
            'no secret: set plugins.config.webhook.secret in config.yaml (at least 16 ' +
              'characters, e.g. "${env:WEBHOOK_SECRET}"); deliveries are always signed',
          );
        const body = JSON.stringify(args.body ?? ctx.event);
        const headers = {
          'Content-Type': 'application/json',
          'Idempotency-Key': ctx.idempotencyKey,
          'X-Pinbot-Event': ctx.event.type,
        };
        const secret = ctx.config.secret;
        let last = '';
        for (let attempt = 1; attempt <= ctx.config.retries + 1; attempt++) {
          // on the clock, off the step's timeout
          if (attempt > 1) await ctx.sleep(ctx.config.backoff_ms * 2 ** (attempt - 2));
          try {
            // an attempt's timeout is wall time: waiting on the network is not virtual
            const r = await fetch(url, {
              method: 'POST',
              headers: {
                ...headers,
                'X-Pinbot-Attempt': String(attempt),
                'X-Pinbot-Signature': sign(secret, body, ctx.now(), ctx.idempotencyKey),
              },
              body,
              signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.config.timeout_ms)]),
            });
            await r.body?.cancel();
            if (r.ok) return { status: r.status, attempts: attempt };
            last = `answered ${r.status}`;
            if (!RETRY.has(r.status))
              throw new Error(`${url} ${last}; not retried (only timeouts, 408, 425, 429 and 5xx are)`);
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            if ((err as Error).message.includes('not retried')) throw err;
            last =
              (err as Error).name === 'TimeoutError'
                ? `did not answer within ${ctx.config.timeout_ms} ms`
                : `could not be reached (${(err as Error).message})`;
          }
          ctx.log.warn({ url, attempt, last }, 'webhook delivery failed');
        }
        throw new Error(`${url} ${last}, after ${ctx.config.retries + 1} attempts`);
      },
    },
  },
});
