// Baseline of the write bench: Fastify 5 doing, in plain code over Maps, the work API.md asks of
// a keyed `POST /conversations/:id/messages` as pinbot does it (no pinbot code: a baseline) —
// the key looked up, a fixed-window count per user in two buckets (`general`, `messages`) with
// `RateLimit` / `RateLimit-Policy`, an `X-Request-Id`, the body validated by Fastify's schema
// (content 1–4000 code points, not only whitespace), the conversation found and the sender a
// member; the Idempotency-Key's outcome id (SHA-256 of user + key) and the request's
// fingerprint (SHA-256 of method, path and canonical body), a stored outcome replayed byte for
// byte or 409 for another request; then the message, the conversation's activity, the sender's
// usage and the outcome kept as frozen records in Maps, the four in one JSON journal line
// (CRC-32 in front, as pinbot's) appended with group-commit fdatasync (group-commit.ts), and
// 201 with the message's JSON after the fdatasync that covers it. Left out: the request log,
// metrics, plugins, key digests, the trimming of a conversation past 10,000 messages' refunds.
// node bin/run-ts.js bench/baselines/fastify-write-contract.ts META_JSON FILE
import { hash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import Fastify, { type FastifyError } from 'fastify';
import type { MessagesMeta } from '../data/messages.js';
import { groupCommit } from './group-commit.js';

interface User {
  readonly id: string;
  readonly display_name: string;
  readonly pin_code: string;
}
interface Outcome {
  readonly id: string;
  readonly user_id: string;
  readonly fingerprint: string;
  readonly status: number;
  readonly body: string;
  readonly created_at: number;
}
interface Activity {
  readonly id: string;
  readonly activity_at: number;
  readonly last_message_id: string | null;
  readonly last_timestamp: number;
}
interface Message {
  readonly id: string;
  readonly conversation_id: string;
  readonly sender_id: string;
  readonly content: string;
  readonly timestamp: number;
}

/** What pinbot's config gives by default (messaging.max_length, quotas). */
const MAX_LENGTH = 4000;
const BYTES_PER_USER = 10_485_760;
const KEPT_PER_CONVERSATION = 10_000;
/** The limits `bench/write.ts` runs pinbot with (AS_SERVE): no load reaches them. */
const LIMIT = 1_000_000_000;
const WINDOW_MS = 60_000;

const meta = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as MessagesMeta;
const userOf = (u: MessagesMeta['users'][number]): User =>
  Object.freeze({ id: u.id, display_name: u.name, pin_code: u.pin });
const byKey = new Map<string, User>(meta.users.map((u) => [u.key, userOf(u)]));
const usersById = new Map([...byKey.values()].map((u) => [u.id, u]));
const conversations = new Map<string, readonly string[]>();
const idAt = (i: number) => meta.users[i]!.id;
meta.direct.forEach((id, i) => conversations.set(id, [idAt(2 * i), idAt(2 * i + 1)]));
conversations.set(
  meta.big.id,
  meta.big.participants.map((i) => meta.users[i]!.id),
);
const activity = new Map<string, Activity>();
const messages = new Map<string, Message>();
const byConversation = new Map<string, string[]>();
interface Usage {
  readonly id: string;
  readonly bytes: number;
  readonly groups: number;
}
const usage = new Map<string, Usage>();
const outcomes = new Map<string, Outcome>();
const outcomesByDay = new Map<string, string[]>();
const running = new Set<string>();
const journal = await groupCommit(process.argv[3]!);
let seq = 0;

const sha = (s: string) => hash('sha256', s, 'hex');

/** A fixed window per user and bucket, and its policy text made once per user. */
const windows = new Map<string, { start: number; hits: number; policy: string }>();
function count(bucket: string, userId: string, now: number): { field: string; policy: string } {
  const key = `${bucket}:${userId}`;
  let w = windows.get(key);
  if (!w || now - w.start >= WINDOW_MS) {
    const pk = Buffer.from(sha(userId).slice(0, 12)).toString('base64');
    const policy = w?.policy ?? `"${bucket}"; q=${LIMIT}; w=${WINDOW_MS / 1000}; pk=:${pk}:`;
    w = { start: now, hits: 0, policy };
    windows.set(key, w);
  }
  w.hits++;
  const reset = Math.ceil((w.start + WINDOW_MS - now) / 1000);
  return { field: `"${bucket}"; r=${Math.max(0, LIMIT - w.hits)}; t=${reset}`, policy: w.policy };
}

/** JSON text with object keys sorted (pinbot's canonical body; one-key bodies are already so). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x ?? null)).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** UTF-8 bytes of a text in a JSON string, as pinbot's quota counts them. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
const byteSize = (s: string) =>
  ESCAPED.test(s) ? Buffer.byteLength(JSON.stringify(s), 'utf8') - 2 : Buffer.byteLength(s, 'utf8');
const errorBody = (code: string, message: string) => JSON.stringify({ error: { code, message } });

/** One journal line of a transaction's changes, as pinbot's: `{"k":CRC,"s":…,"c":[…]}`. */
function journalLine(changes: unknown[]): string {
  const body = JSON.stringify({ s: ++seq, c: changes }).slice(1);
  return `{"k":"${crc32(body).toString(16).padStart(8, '0')}",${body}\n`;
}

let lastId = '';
/** A message id that sorts by time, as pinbot's `newId('msg')`. */
function messageId(now: number): string {
  let id = `msg_${now.toString(36).padStart(9, '0')}${randomUUID().slice(0, 8)}`;
  while (id <= lastId) id = `${lastId}0`;
  lastId = id;
  return id;
}

const app = Fastify({ logger: false, bodyLimit: 100 * 1024 });
app.setErrorHandler((err: FastifyError, _req, reply) => {
  const status = err.statusCode ?? 500;
  const bad = status === 400 ? 'invalid_json' : 'internal_error';
  const code = err.validation ? 'validation_failed' : bad;
  void reply.code(status).type('application/json').send(errorBody(code, err.message));
});

type Req = { Params: { id: string }; Body: { content: string } };
const schema = {
  params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['content'],
    properties: { content: { type: 'string', minLength: 1, maxLength: MAX_LENGTH } },
  },
};

/** Who writes, when, and the write's key: its outcome id and the request's fingerprint. */
interface Ctx {
  readonly user: User;
  readonly now: number;
  readonly key?: { readonly id: string; readonly fingerprint: string };
}
type Result = { status: number; body: string; line?: string };

app.post<Req>('/api/v1/conversations/:id/messages', { schema }, async (req, reply) => {
  reply.header('X-Request-Id', randomUUID()).type('application/json');
  const user = byKey.get((req.headers['x-api-key'] as string | undefined) ?? '');
  if (!user) return reply.code(401).send(errorBody('unauthorized', 'no such key'));
  const now = Date.now();
  const general = count('general', user.id, now);
  const bucket = count('messages', user.id, now);
  reply.header('RateLimit', `${general.field}, ${bucket.field}`);
  reply.header('RateLimit-Policy', `${general.policy}, ${bucket.policy}`);

  const given = req.headers['idempotency-key'] as string | undefined;
  let ctx: Ctx = { user, now };
  if (given !== undefined) {
    if (given.length < 1 || given.length > 255)
      return reply.code(400).send(errorBody('validation_failed', 'Idempotency-Key: 1–255 chars'));
    const id = `idem_${sha(`${user.id}\u0000${given}`)}`;
    const fingerprint = sha(`POST ${req.url}\n${canonical(req.body)}`);
    if (running.has(id)) return reply.code(409).send(errorBody('idempotency_key_in_use', 'busy'));
    const prior = outcomes.get(id);
    if (prior) {
      if (prior.fingerprint !== fingerprint)
        return reply.code(409).send(errorBody('idempotency_key_reused', 'another request'));
      return reply.code(prior.status).header('Idempotent-Replayed', 'true').send(prior.body);
    }
    running.add(id);
    ctx = { user, now, key: { id, fingerprint } };
  }
  try {
    const { status, body, line } = write(ctx, req.params.id, req.body.content);
    if (line !== undefined) await journal.append(line);
    return reply.code(status).send(body);
  } finally {
    if (ctx.key) running.delete(ctx.key.id);
  }
});

/**
 * The transaction: the conversation and membership, the content, the quota, the records kept
 * and the journal line of them (none for a refusal not stored: no key, or nothing changed).
 */
function write(ctx: Ctx, conversationId: string, content: string): Result {
  const { user, now } = ctx;
  const members = conversations.get(conversationId);
  if (!members?.includes(user.id)) {
    return refusal(ctx, 404, errorBody('conversation_not_found', 'no such conversation'));
  }
  if (content.trim().length === 0) {
    return { status: 400, body: errorBody('validation_failed', 'body.content: only whitespace') };
  }
  const bytes = byteSize(content);
  const used = usage.get(user.id) ?? { id: user.id, bytes: 0, groups: 0 };
  if (used.bytes + bytes > BYTES_PER_USER) {
    return refusal(ctx, 400, errorBody('quota_exceeded', 'bytes per user'));
  }
  const last = activity.get(conversationId);
  const timestamp = Math.max(now, (last?.last_timestamp ?? 0) + 1);
  const id = messageId(now);
  const message: Message = Object.freeze({
    id,
    conversation_id: conversationId,
    sender_id: user.id,
    content,
    timestamp,
  });
  const act: Activity = Object.freeze({
    id: conversationId,
    activity_at: Math.max(last?.activity_at ?? 0, timestamp),
    last_message_id: id,
    last_timestamp: timestamp,
  });
  const use: Usage = Object.freeze({ id: user.id, bytes: used.bytes + bytes, groups: used.groups });
  messages.set(id, message);
  let ids = byConversation.get(conversationId);
  if (!ids) byConversation.set(conversationId, (ids = []));
  ids.push(id);
  // a conversation keeps its newest 10,000 (the bench's stay well under it)
  if (ids.length > KEPT_PER_CONVERSATION) messages.delete(ids.shift()!);
  activity.set(conversationId, act);
  usage.set(user.id, use);
  const sender = usersById.get(user.id)!;
  const body = JSON.stringify({
    id,
    conversation_id: conversationId,
    content,
    sender: { id: sender.id, display_name: sender.display_name, pin_code: sender.pin_code },
    timestamp,
    created_at: new Date(timestamp).toISOString(),
  });
  const changes: unknown[] = [
    ['messages', id, message],
    ['conversation_activity', conversationId, act],
    ['user_usage', user.id, use],
  ];
  if (ctx.key) changes.push(['idempotency', ctx.key.id, keep(ctx, 201, body)]);
  return { status: 201, body, line: journalLine(changes) };
}

/** A refusal of the operation: stored as the key's outcome (with its own journal line). */
function refusal(ctx: Ctx, status: number, body: string): Result {
  if (!ctx.key) return { status, body };
  const kept = keep(ctx, status, body);
  return { status, body, line: journalLine([['idempotency', ctx.key.id, kept]]) };
}

/** The outcome kept for the write's key, in the Map of outcomes and its index by UTC day. */
function keep({ user, now, key }: Ctx, status: number, body: string): Outcome {
  const { id, fingerprint } = key!;
  const user_id = user.id;
  const o: Outcome = Object.freeze({ id, user_id, fingerprint, status, body, created_at: now });
  outcomes.set(id, o);
  const day = new Date(now).toISOString().slice(0, 10);
  let ids = outcomesByDay.get(day);
  if (!ids) outcomesByDay.set(day, (ids = []));
  ids.push(id);
  return o;
}

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
