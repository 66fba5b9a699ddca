import { checkPinArg, pinArg } from './pin-arg.js';
import { isTemplate } from '../../liquid/templates.js';
import type { ActionDef } from '../../contract/types.js';

interface SendMoneyArgs {
  to: string;
  amount: number | string;
  note?: string;
}

/** Parses an amount (number, or the text a template rendered) into cents; throws when it is not one. */
export function toCents(amount: unknown): number {
  const n = typeof amount === 'number' ? amount : Number(String(amount).trim());
  const cents = Math.round(n * 100);
  if (!Number.isFinite(n) || n <= 0 || Math.abs(cents - n * 100) > 1e-6) {
    throw new Error(`amount ${JSON.stringify(amount)} is not a positive number with at most 2 decimals`);
  }
  return cents;
}

/**
 * `send_money`: a transfer from the bot, within the bot's guardrails (limits.max_per_transfer,
 * limits.max_per_day, limits.send_to). The daily total counts a transfer when it starts, so a
 * crash cannot let a retry slip past the cap.
 */
const sendMoney: ActionDef = {
  name: 'send_money',
  description:
    "Sends money to a PIN, within the bot's `limits` (max_per_transfer, max_per_day, " +
    'send_to allow-list). The recipient must accept it.',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['to', 'amount'],
    properties: {
      to: { type: 'string', minLength: 1, description: 'recipient PIN (a Liquid template)' },
      amount: { type: ['number', 'string'], description: 'amount, at most 2 decimals (a number or a Liquid template)' },
      note: { type: 'string', maxLength: 500, description: 'note shown to the recipient' },
    },
  },
  example: { to: '{{ event.sender.pin_code }}', amount: 1.5, note: 'refund' },
  effect: 'api',
  check(args) {
    const a = args as SendMoneyArgs;
    const problems = checkPinArg(a.to, ['to'], 'to');
    // a literal amount (a number, or text that is not a template) is checked now, not at run time
    if (typeof a.amount === 'number' || (typeof a.amount === 'string' && !isTemplate(a.amount))) {
      try {
        toCents(a.amount);
      } catch (err) {
        problems.push({
          path: ['amount'],
          message: (err as Error).message,
          hint: 'e.g. amount: 2.50, or a template such as amount: "{{ event.amount }}"',
        });
      }
    }
    return problems;
  },
  prepare(args, ctx) {
    const a = args as SendMoneyArgs;
    const to = pinArg(a.to, 'to');
    const cents = toCents(a.amount);
    ctx.checkSpend(to, cents);
    ctx.reserveSpend(cents);
    return { to, amount: cents / 100, note: a.note ?? '' };
  },
  async run(args, ctx) {
    const a = args as { to: string; amount: number; note: string };
    return ctx.api.wallet.send(
      { recipient_pin: a.to, amount: a.amount, note: a.note },
      { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal },
    );
  },
};

export const moneyActions: ActionDef[] = [sendMoney];
