import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { definePlugin } from 'pinbot/plugin';

/** Whether `header` is `sha256=<hex HMAC-SHA256 of body>` under `secret`, in constant time. */
function signed(secret: string, body: Buffer, header: string | undefined): boolean {
  const want = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const got = Buffer.from(header ?? '');
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * webhook_in: an event source. A POST to `/plugins/webhook_in/<bot>` on the pinbot server,
 * signed with the shared secret (`X-Pinbot-Signature: sha256=<hex HMAC-SHA256 of the body>`),
 * becomes a `webhook_in.received` event of that bot — through its inbox, exactly once per
 * `Idempotency-Key` (or body). A bad or missing signature is a 401 and nothing is emitted.
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
  version: '1.0.0',
  pinbot: '^0.1.0',
  description: 'Signed HTTP POSTs to /plugins/webhook_in/<bot> become bot events.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      secret: { type: 'string', minLength: 16, description: 'the shared HMAC-SHA256 key, e.g. "${env:WEBHOOK_IN_SECRET}"' },
      secrets: { type: 'object', additionalProperties: { type: 'string', minLength: 16 }, description: 'a key per bot (bot name: key), instead of secret' },
    },
  },
  sources: {
    received: {
      description: 'A signed POST to /plugins/webhook_in/<bot>: `body` is its JSON, `received_at` when it came.',
      example: { body: { action: 'opened', title: 'hello' }, received_at: '2026-01-01T09:00:00.000Z', content_type: 'application/json' },
    },
  },
  setup(ctx) {
    ctx.route('POST', '/:bot', async (req) => {
      const bot = req.params.bot!;
      const secret = ctx.config.secrets?.[bot] ?? ctx.config.secret;
      if (!secret) return { status: 503, body: { error: { code: 'not_configured', message: 'set plugins.config.webhook_in.secret in config.yaml' } } };
      if (!signed(secret, req.body, req.headers['x-pinbot-signature'])) return { status: 401, body: { error: { code: 'bad_signature', message: 'X-Pinbot-Signature must be sha256=<hex HMAC-SHA256 of the body> under the shared secret' } } };
      const body = req.json();
      if (!ctx.listeners('received').includes(bot)) return { status: 404, body: { error: { code: 'not_found', message: `no bot named ${bot} has a rule on webhook_in.received` } } };
      const key = req.headers['idempotency-key'] ?? createHash('sha256').update(req.body).digest('hex');
      const queued = await ctx.emit('received', { bot, key, payload: { body: body as Record<string, unknown>, received_at: new Date(ctx.now()).toISOString(), content_type: req.headers['content-type'] ?? null } });
      return queued.length ? { status: 202, body: { queued: true, key } } : { status: 200, body: { queued: false, duplicate: true, key } };
    });
  },
});
