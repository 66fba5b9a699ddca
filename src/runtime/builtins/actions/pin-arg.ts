import { normalizePin } from '../../../util/pin.js';
import { isTemplate } from '../../liquid/templates.js';
import type { CheckProblem } from '../../contract/types.js';

const PIN = /^[A-Z0-9]{6}$/;

/**
 * Checks an action argument that names a user (`to:`, `pins:`): outside templates it must be a
 * PIN. A display name would work on one server and not the next (names are not unique, and each
 * server has its own users), and the API names users by PIN only — so it is refused at
 * validation, with the way to write it, instead of failing with a 404 when the step runs.
 *
 * @example checkPinArg('Bob', ['to'], 'to') // [{ path: ['to'], message: 'to: "Bob" is not a PIN …' }]
 */
export function checkPinArg(value: unknown, path: Array<string | number>, field: string): CheckProblem[] {
  if (typeof value !== 'string' || isTemplate(value) || PIN.test(normalizePin(value))) return [];
  return [
    {
      path,
      message:
        `${field}: "${value}" is not a PIN: actions name users by PIN (6 letters or ` +
        `digits) — a display name is not unique, and differs from server to server`,
      hint: `write the user's PIN (pinbot users list shows it), or a template such as "{{ event.sender.pin_code }}"`,
    },
  ];
}

/** A rendered user argument as a PIN; throws naming the field when it is not one. */
export function pinArg(value: unknown, field: string): string {
  const pin = normalizePin(String(value ?? ''));
  if (!pin) throw new Error(`${field} rendered empty`);
  if (!PIN.test(pin))
    throw new Error(`${field} rendered ${JSON.stringify(String(value))}, which is not a PIN (6 letters or digits)`);
  return pin;
}
