import type { ActionRunContext, ActionDef, Subject } from '../../contract/types.js';

/** The id of the event's subject (transfer, introduction, contact request). Internal. */
function subjectOf(ctx: ActionRunContext): { subject: Subject; id: string } {
  const subject = ctx.trigger.subject;
  const id = ctx.scope.event.id;
  if (!subject || typeof id !== 'string')
    throw new Error(`${ctx.trigger.name} events have nothing to accept or decline`);
  return { subject, id };
}

const answer = (name: 'accept' | 'decline'): ActionDef => ({
  name,
  description:
    name === 'accept'
      ? "Accepts the event's transfer (the money is credited), introduction, or contact request."
      : "Declines the event's transfer (the money goes back to the sender), introduction, or contact request.",
  schema: { type: 'null', description: 'no options: write `- ' + name + '`' },
  example: null,
  bare: true,
  effect: 'api',
  needs: 'subject',
  templated: false,
  async run(_args, ctx) {
    const { subject, id } = subjectOf(ctx);
    const o = { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal };
    if (subject === 'transfer') {
      const r = name === 'accept' ? await ctx.api.wallet.accept(id, o) : await ctx.api.wallet.decline(id, o);
      return { transaction: r.transaction };
    }
    if (subject === 'introduction')
      return name === 'accept' ? ctx.api.introductions.accept(id, o) : ctx.api.introductions.decline(id, o);
    return name === 'accept' ? ctx.api.contacts.acceptRequest(id, o) : ctx.api.contacts.declineRequest(id, o);
  },
});

/** `accept` and `decline`. */
export const answerActions: ActionDef[] = [answer('accept'), answer('decline')];
