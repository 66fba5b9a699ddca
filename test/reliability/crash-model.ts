/**
 * What the crash loop knows the server must hold: every acknowledged write, as the set of states
 * each resource may be in. A write in flight when the server dies may or may not have committed,
 * so issuing it widens the set; its acknowledgement narrows it to the acknowledged state; the
 * next verification narrows it to what the server shows. A state outside the set is a lost write.
 */

export type Kind = 'user' | 'txn' | 'msg' | 'creq' | 'contact' | 'intro' | 'once';

export interface Tracked {
  kind: Kind;
  id: string;
  /** States the resource may be in now. */
  allowed: Set<string>;
  /** Facts the verifier needs (owner key, conversation, PINs …). */
  meta: Record<string, string>;
  /** True while a client has a request on it in flight (one at a time). */
  busy: boolean;
}

export interface AckCounts {
  total: number;
  byKind: Record<string, number>;
}

/**
 * The set of tracked resources and the count of acknowledged writes.
 *
 * @example
 * const model = new CrashModel();
 * model.created('txn', id, 'pending', { sender: key });
 * const release = model.begin(t, 'accepted'); release('acked');
 */
export class CrashModel {
  readonly items = new Map<string, Tracked>();
  readonly acks: AckCounts = { total: 0, byKind: {} };

  /** Counts one acknowledged write. */
  ack(what: string): void {
    this.acks.total++;
    this.acks.byKind[what] = (this.acks.byKind[what] ?? 0) + 1;
  }

  /** A resource whose creation was acknowledged. */
  created(kind: Kind, id: string, state: string, meta: Record<string, string>, what: string = kind): Tracked {
    const t: Tracked = { kind, id, allowed: new Set([state]), meta, busy: false };
    this.items.set(id, t);
    this.ack(what);
    return t;
  }

  /** Free resources of a kind in a given state (not busy, state certain). */
  free(kind: Kind, state: string, where?: (t: Tracked) => boolean): Tracked[] {
    const out: Tracked[] = [];
    for (const t of this.items.values()) {
      if (t.kind === kind && !t.busy && t.allowed.size === 1 && t.allowed.has(state) && (!where || where(t)))
        out.push(t);
    }
    return out;
  }

  /**
   * Starts a transition of `t` to `target`. The returned function ends it: `acked` (the server
   * answered 2xx), `refused` (it answered 4xx: nothing changed) or `unknown` (no answer: it may
   * or may not have happened).
   */
  begin(
    t: Tracked,
    target: string,
    what: string,
  ): (outcome: 'acked' | 'refused' | 'unknown', meta?: Record<string, string>) => void {
    t.busy = true;
    const hadTarget = t.allowed.has(target);
    t.allowed.add(target);
    return (outcome, meta) => {
      t.busy = false;
      if (outcome === 'acked') {
        t.allowed = new Set([target]);
        Object.assign(t.meta, meta ?? {});
        this.ack(what);
      } else if (outcome === 'refused' && !hadTarget) t.allowed.delete(target);
    };
  }

  /**
   * After a verification: the resource is in `observed`; false when that is not allowed (lost).
   * Either way the model now expects what it saw, so one loss is reported once.
   */
  observe(t: Tracked, observed: string): boolean {
    const ok = t.allowed.has(observed);
    t.allowed = new Set([observed]);
    return ok;
  }
}
