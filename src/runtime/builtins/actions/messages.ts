import { checkPinArg, pinArg } from './pin-arg.js';
import type { ActionDef, CheckProblem } from '../../contract/types.js';

const content = { type: 'string', minLength: 1, description: 'message text (a Liquid template)' };
const pin = { type: 'string', minLength: 1, description: 'a PIN (a Liquid template)' };

const nonEmpty = (s: unknown, what: string) => {
  if (typeof s !== 'string' || s.trim() === '') throw new Error(`${what} rendered empty`);
  return s;
};

/** `reply`: a message back — in the event's conversation, or directly to whoever caused it. */
const reply: ActionDef = {
  name: 'reply',
  description:
    "Sends a message back: in the event's conversation (message.received, " +
    'introduction.completed), else directly to the user who caused the event.',
  schema: content,
  example: 'Thanks {{ event.sender.display_name }}!',
  effect: 'api',
  needs: 'reply',
  prepare: (args) => nonEmpty(args, 'reply'),
  async run(args, ctx) {
    const target = ctx.trigger.replyTo?.(ctx.scope.event, ctx.scope.me);
    if (!target) throw new Error(`${ctx.trigger.name} events have no one to reply to; use send_message`);
    const o = { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal };
    const text = args as string;
    if ('conversation_id' in target) return ctx.api.conversations.send(target.conversation_id, { content: text }, o);
    return ctx.api.messages.send({ recipient_pin: target.pin, content: text }, o);
  },
};

interface SendMessageArgs {
  to?: string;
  conversation?: string;
  content: string;
}

/** `send_message`: a message to a PIN, or into a conversation by id. */
const sendMessage: ActionDef = {
  name: 'send_message',
  description: 'Sends a message to a PIN (`to`) or into a conversation by id (`conversation`).',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['content'],
    properties: {
      to: pin,
      conversation: { type: 'string', minLength: 1, description: 'a conversation id (a Liquid template)' },
      content,
    },
  },
  example: { to: 'ABC123', content: 'Weekly reminder: standup at 10' },
  effect: 'api',
  check(args): CheckProblem[] {
    const a = args as SendMessageArgs;
    if ((a.to === undefined) === (a.conversation === undefined))
      return [{ path: [], message: 'give exactly one of to (a PIN) or conversation (an id)', hint: 'e.g. to: ABC123' }];
    return checkPinArg(a.to, ['to'], 'to');
  },
  prepare(args) {
    const a = args as SendMessageArgs;
    return {
      ...a,
      content: nonEmpty(a.content, 'content'),
      ...(a.to !== undefined ? { to: pinArg(nonEmpty(a.to, 'to'), 'to') } : {}),
    };
  },
  async run(args, ctx) {
    const a = args as SendMessageArgs;
    const o = { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal };
    if (a.conversation) return ctx.api.conversations.send(a.conversation, { content: a.content }, o);
    return ctx.api.messages.send({ recipient_pin: a.to!, content: a.content }, o);
  },
};

/** `create_group`: a group conversation with the bot and the given PINs. */
const createGroup: ActionDef = {
  name: 'create_group',
  description: 'Creates a group conversation named `name` with the bot and the users of `pins`.',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'pins'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      pins: { type: 'array', minItems: 1, items: pin },
    },
  },
  example: { name: 'Book club', pins: ['ABC123', '{{ event.sender.pin_code }}'] },
  effect: 'api',
  check: (args) => ((args as { pins?: unknown[] }).pins ?? []).flatMap((p, i) => checkPinArg(p, ['pins', i], 'pins')),
  prepare(args) {
    const a = args as { name: string; pins: string[] };
    return { name: nonEmpty(a.name, 'name'), pins: a.pins.map((p) => pinArg(nonEmpty(p, 'pin'), 'pins')) };
  },
  run(args, ctx) {
    const a = args as { name: string; pins: string[] };
    return ctx.api.conversations.create(
      { name: a.name, participant_pins: a.pins },
      { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal },
    );
  },
};

/** `reply`, `send_message`, `create_group`. */
export const messageActions: ActionDef[] = [reply, sendMessage, createGroup];
