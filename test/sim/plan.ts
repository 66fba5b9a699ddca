import type { Rng } from './rng.js';

/**
 * The operations of one simulated workload, generated from the seed alone (never from
 * responses), so a seed always means the same requests. Operations refer to earlier sends by
 * their index in the plan; when run, they wait for that send's outcome.
 */
export type Op =
  | { kind: 'send'; from: number; to: number; cents: number; key?: string; note: string }
  | { kind: 'overdraw'; from: number; to: number }
  | { kind: 'bad_amount'; from: number; to: number; amount: unknown; code: 'invalid_amount' | 'validation_failed' }
  | { kind: 'answer'; send: number; action: 'accept' | 'decline'; key?: string }
  | { kind: 'race'; send: number; acceptFirst: boolean }
  | { kind: 'wrong_party'; send: number; who: 'sender' | 'stranger'; action: 'accept' | 'decline' }
  | { kind: 'retry'; of: number }
  | { kind: 'duplicate'; send: number; action: 'accept' | 'decline'; key: string }
  | { kind: 'read'; user: number; what: 'balance' | 'pending' | 'transactions' }
  | { kind: 'ubi_day' };

/** Amounts that must be refused (API.md "Money"), with the code each gets. */
const BAD_AMOUNTS: Array<[unknown, 'invalid_amount' | 'validation_failed']> = [
  [0, 'invalid_amount'],
  [-1, 'invalid_amount'],
  [0.001, 'invalid_amount'],
  [1.005, 'invalid_amount'],
  [0.1 + 0.2, 'invalid_amount'],
  [1_000_000.01, 'invalid_amount'],
  ['5', 'validation_failed'],
  [null, 'validation_failed'],
  [[1], 'validation_failed'],
];

/** Builds the plan: `ops` operations among `users` users. */
export function makePlan(r: Rng, { ops, users }: { ops: number; users: number }): Op[] {
  const plan: Op[] = [];
  const sends: number[] = [];
  const keyed: number[] = [];
  const pair = () => {
    const from = r.int(0, users - 1);
    let to = r.int(0, users - 2);
    if (to >= from) to++;
    return { from, to };
  };
  const anySend = () => r.pick(sends);
  // Mostly recent sends, so answers often meet a transfer still pending (and race each other).
  const recentSend = () =>
    sends[Math.max(0, sends.length - 1 - Math.floor(r.next() ** 2 * Math.min(sends.length, 200)))]!;
  for (let i = 0; i < ops; i++) {
    const roll = r.next();
    let op: Op;
    if (sends.length === 0 || roll < 0.3) {
      const cents = r.chance(0.4) ? r.int(1, 15) * 100 : r.int(1, 1000);
      op = {
        kind: 'send',
        ...pair(),
        cents,
        note: r.chance(0.3) ? `op ${i}` : '',
        ...(r.chance(0.25) ? { key: `send-${i}` } : {}),
      };
      sends.push(i);
    } else if (roll < 0.34) op = { kind: 'overdraw', ...pair() };
    else if (roll < 0.37) {
      const [amount, code] = r.pick(BAD_AMOUNTS);
      op = { kind: 'bad_amount', ...pair(), amount, code };
    } else if (roll < 0.6)
      op = { kind: 'answer', send: recentSend(), action: 'accept', ...(r.chance(0.3) ? { key: `acc-${i}` } : {}) };
    else if (roll < 0.74)
      op = { kind: 'answer', send: recentSend(), action: 'decline', ...(r.chance(0.3) ? { key: `dec-${i}` } : {}) };
    else if (roll < 0.82) op = { kind: 'race', send: recentSend(), acceptFirst: r.chance(0.5) };
    else if (roll < 0.85)
      op = {
        kind: 'wrong_party',
        send: anySend(),
        who: r.chance(0.5) ? 'sender' : 'stranger',
        action: r.chance(0.5) ? 'accept' : 'decline',
      };
    else if (roll < 0.9 && keyed.length > 0) op = { kind: 'retry', of: r.pick(keyed) };
    else if (roll < 0.92)
      op = { kind: 'duplicate', send: recentSend(), action: r.chance(0.5) ? 'accept' : 'decline', key: `dup-${i}` };
    else if (roll < 0.995)
      op = { kind: 'read', user: r.int(0, users - 1), what: r.pick(['balance', 'pending', 'transactions'] as const) };
    else op = { kind: 'ubi_day' };
    if ((op.kind === 'send' || op.kind === 'answer') && op.key) keyed.push(i);
    plan.push(op);
  }
  return plan;
}
