import { send } from '../http.js';
import { StepFailure, type StepKind } from '../types.js';

interface SayStep {
  say: string;
  as: string;
  to: string;
}

/**
 * `say: TEXT` sends a message as a user (`as:`) to another (`to:`, a user of the scenario or a
 * PIN): the short way to talk to a bot, and to answer its questions (`ask`), instead of a
 * `request: POST /messages/send` with its body.
 *
 * @example - { as: alice, to: pizza, say: "large" }
 */
export const sayStep: StepKind<SayStep> = {
  name: 'say',
  description:
    'sends a message as a user (as:) to another user of the scenario or a PIN (to:): ' +
    'talking to a bot, answering its questions (templates allowed)',
  schema: {
    properties: {
      say: { type: 'string', minLength: 1, description: 'the message text (a template)' },
      as: { type: 'string', minLength: 1, description: 'the user who says it' },
      to: { type: 'string', minLength: 1, description: 'a user of the scenario (by name), or a PIN' },
    },
    required: ['say', 'as', 'to'],
  },
  label: (s) => `${s.as} says ${JSON.stringify(s.say)} to ${s.to}`,
  check(s, c) {
    c.user(s.as, ['as']);
    c.templates(s.say, ['say']);
    c.templates(s.to, ['to']);
  },
  async run(s, ctx) {
    const who = ctx.target.users[String(ctx.render(s.as))];
    if (!who) throw new StepFailure(`no user "${String(ctx.render(s.as))}" in this scenario`);
    const to = String(ctx.render(s.to));
    const pin = ctx.target.users[to]?.pin_code ?? to.trim().toUpperCase();
    if (!/^[A-Z0-9]{6}$/.test(pin)) throw new StepFailure(`to: "${to}" is neither a user of this scenario nor a PIN`);
    const content = String(ctx.render(s.say));
    const answer = await send({
      method: 'POST',
      url: new URL('/api/v1/messages/send', ctx.target.baseUrl).toString(),
      headers: { 'X-API-Key': who.api_key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ recipient_pin: pin, content }),
    });
    await ctx.target.settle();
    if (answer.status >= 400)
      throw new StepFailure(
        `${who.name} could not send the message: ${answer.status} ` +
          `${ctx.mask(JSON.stringify(answer.body)).slice(0, 300)}`,
      );
    return { detail: `${answer.status}` };
  },
};
