import { createHash } from 'node:crypto';
import { definePlugin } from 'pinbot/plugin';
import { SeenSignatures } from './lib/seen-signatures.js';
import { SIGNATURE_FORMAT, verify } from './lib/webhook-signature.js';

/**
 * webhook_in: an event source. A POST to `/plugins/webhook_in/<bot>` on the pinbot server,
 * signed with the shared secret (`X-Pinbot-Signature: t=<Unix seconds>,v1=<hex HMAC-SHA256>`,
 * see lib/webhook-signature.ts), becomes a `webhook_in.received` event of that bot — through its
 * inbox, exactly once per `Idempotency-Key` (or body). A bad or missing signature is a 401 and
 * nothing is emitted; so is one signed more than `tolerance_s` from the server's clock (a
 * captured request cannot be sent again later), and the same signature is taken once.
 *
 * ```yaml
 * - on: webhook_in.received
 *   if: { liquid: "{{ event.body.action == 'opened' }}" }
 *   do:
 *     - send_message: { to: ABC123, content: "New: {{ event.body.title }}" }
 * ```
 */
export default definePlugin({
  name: 'webhook_in',
  version: '2.0.0',
  pinbot: '^0.1.0',
  description: 'Signed HTTP POSTs to /plugins/webhook_in/<bot> become bot events.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      secret: {
        type: 'string',
        minLength: 16,
        description: 'the shared HMAC-SHA256 key, e.g. "${env:WEBHOOK_IN_SECRET}"',
      },
      secrets: {
        type: 'object',
        additionalProperties: { type: 'string', minLength: 16 },
        description: 'a key per bot (bot name: key), instead of secret',
      },
      tolerance_s: {
        type: 'integer',
        minimum: 1,
        maximum: 3600,
        default: 300,
        description: 'how far the signed time t may be from the server clock, either way (s)',
      },
      max_remembered: {
        type: 'integer',
        minimum: 1,
        default: 10_000,
        description:
          'signatures kept to refuse a replay within the window; past that, deliveries get 429 until the oldest expire',
      },
    },
  },
  sources: {
    received: {
      description: 'A signed POST to /plugins/webhook_in/<bot>: `body` is its JSON, `received_at` when it came.',
      example: {
        body: { action: 'opened', title: 'hello' },
        received_at: '2026-01-01T09:00:00.000Z',
        content_type: 'application/json',
      },
    },
  },
  setup(ctx) {
    // a Map, not the settings object: a bot name from the URL (`constructor`, `__proto__`) must
    // find only the keys the operator wrote, never a member every object inherits
    const secrets = new Map(Object.entries(ctx.config.secrets ?? {}));
    const tolerance = ctx.config.tolerance_s;
    const seen = new SeenSignatures(2 * tolerance * 1000, ctx.config.max_remembered);
    ctx.route('POST', '/:bot', async (req) => {
      const bot = req.params.bot!;
      const secret = secrets.get(bot) ?? ctx.config.secret;
      if (!secret && secrets.size === 0)
        return {
          status: 503,
          body: { error: { code: 'not_configured', message: 'set plugins.config.webhook_in.secret in config.yaml' } },
        };
      // a bot without a key of its own: nothing can be signed for it (and which bots exist is not told)
      if (!secret) return { status: 401, body: { error: { code: 'bad_signature', message: SIGNATURE_FORMAT } } };
      const key = req.headers['idempotency-key'];
      const checked = verify(secret, req.body, key, req.headers['x-pinbot-signature'], ctx.now(), tolerance);
      if (!checked.ok) return { status: 401, body: { error: { code: checked.code, message: checked.message } } };
      const now = ctx.now();
      if (seen.has(checked.id, now)) return { status: 200, body: { queued: false, duplicate: true, key: key ?? null } };
      if (!seen.hasRoom(now)) {
        const retry = Math.max(1, Math.ceil(seen.nextFreeIn(now) / 1000));
        return {
          status: 429,
          headers: { 'Retry-After': String(retry) },
          body: {
            error: {
              code: 'too_many_deliveries',
              message:
                `more than ${ctx.config.max_remembered} deliveries within ` +
                `${2 * tolerance} s (max_remembered); retry after ${retry} s`,
            },
          },
        };
      }
      const body = req.json();
      if (!ctx.listeners('received').includes(bot))
        return {
          status: 404,
          body: { error: { code: 'not_found', message: `no bot named ${bot} has a rule on webhook_in.received` } },
        };
      const eventKey = key || createHash('sha256').update(req.body).digest('hex');
      const queued = await ctx.emit('received', {
        bot,
        key: eventKey,
        payload: {
          body: body as Record<string, unknown>,
          received_at: new Date(now).toISOString(),
          content_type: req.headers['content-type'] ?? null,
        },
      });
      // remembered once the event is queued (or known): a request that failed may be sent again
      seen.add(checked.id, now);
      return queued.length
        ? { status: 202, body: { queued: true, key: eventKey } }
        : { status: 200, body: { queued: false, duplicate: true, key: eventKey } };
    });
  },
});
