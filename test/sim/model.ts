/** A transfer as the simulator saw it created. */
export interface Sent {
  id: string;
  from: number;
  to: number;
  cents: number;
}

/**
 * What the books must be, built only from the API's answers: each 201 send debits, each 200
 * accept credits the recipient, each 200 decline refunds — and a transfer may be answered
 * successfully at most once.
 */
export class Model {
  private readonly balances = new Map<number, number>();
  private readonly byId = new Map<string, Sent & { state?: 'accepted' | 'declined' }>();
  private readonly bySendOp = new Map<number, Sent>();
  grants = 0;
  ubiTotal = 0;

  constructor(private readonly fail: (msg: string) => never) {}

  balance(user: number): number {
    return this.balances.get(user) ?? 0;
  }

  private add(user: number, cents: number): void {
    this.balances.set(user, this.balance(user) + cents);
  }

  grant(user: number, cents: number): void {
    this.add(user, cents);
    this.grants += cents;
  }

  ubi(user: number, cents: number): void {
    this.add(user, cents);
    this.ubiTotal += cents;
  }

  /** A 201 answer to the send of plan operation `op`. */
  send(op: number, t: Sent): void {
    this.bySendOp.set(op, t);
    if (this.byId.has(t.id)) this.fail(`two sends answered with the same transaction ${t.id}`);
    this.byId.set(t.id, { ...t });
    // Answers arrive in any order under concurrency, so a balance here may dip below zero for
    // a moment (a refund's answer not yet seen); the store itself refuses a negative balance.
    this.add(t.from, -t.cents);
  }

  sentAt(op: number): Sent | undefined {
    return this.bySendOp.get(op);
  }

  answer(t: Sent, state: 'accepted' | 'declined', where: string): void {
    const rec = this.byId.get(t.id);
    if (!rec) return this.fail(`${where}: answered unknown transfer ${t.id}`);
    if (rec.state) this.fail(`${where}: transfer ${t.id} was ${state} after it was already ${rec.state}`);
    rec.state = state;
    this.add(state === 'accepted' ? t.to : t.from, t.cents);
  }

  transfers(): Array<Sent & { state?: 'accepted' | 'declined' }> {
    return [...this.byId.values()];
  }
}
