import { ApiRequestError } from '../../../client/errors.js';
import { checkPinArg, pinArg } from './pin-arg.js';
import type { ActionDef } from '../../contract/types.js';

const pin = { type: 'string', minLength: 1, description: 'a PIN (a Liquid template)' };

/** `introduce`: introduces two or more users to each other. */
const introduce: ActionDef = {
  name: 'introduce',
  description: 'Introduces two or more users (by PIN) to each other, with an optional message.',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['pins'],
    properties: { pins: { type: 'array', minItems: 2, items: pin }, message: { type: 'string', maxLength: 1000 } },
  },
  example: { pins: ['{{ event.sender.pin_code }}', 'ABC123'], message: 'You both like chess' },
  effect: 'api',
  check: (args) => ((args as { pins?: unknown[] }).pins ?? []).flatMap((p, i) => checkPinArg(p, ['pins', i], 'pins')),
  prepare(args) {
    const a = args as { pins: string[]; message?: string };
    return { pins: a.pins.map((p) => pinArg(p, 'pins')), ...(a.message !== undefined ? { message: a.message } : {}) };
  },
  run(args, ctx) {
    const a = args as { pins: string[]; message?: string };
    return ctx.api.introductions.create(
      { participant_pins: a.pins, ...(a.message !== undefined ? { message: a.message } : {}) },
      { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal },
    );
  },
};

/**
 * `request_contact`: asks a user to become a contact. Already being contacts, or having asked
 * already, counts as done (the goal holds), and the result says which.
 */
const requestContact: ActionDef = {
  name: 'request_contact',
  description:
    'Sends a contact request to a PIN. If you are already contacts, or a request is ' +
    'already pending, the step succeeds and says so.',
  schema: pin,
  example: '{{ event.sender.pin_code }}',
  effect: 'api',
  check: (args) => checkPinArg(args, [], 'request_contact'),
  prepare: (args) => pinArg(args, 'request_contact'),
  async run(args, ctx) {
    try {
      return await ctx.api.contacts.request(
        { pin_code: args as string },
        { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal },
      );
    } catch (err) {
      if (err instanceof ApiRequestError && (err.code === 'already_contacts' || err.code === 'request_exists'))
        return { status: err.code };
      throw err;
    }
  },
};

export const socialActions: ActionDef[] = [introduce, requestContact];
