import { callAdmin } from '../../src/admin/socket.js';
import { CrashModel, type Tracked } from './crash-model.js';
import { call, type WireResponse } from './http.js';
import type { Rng as Prng } from '../sim/rng.js';

/** A request that got no answer (the server died) and carried an Idempotency-Key: retried after restart. */
export interface Retry {
  kind: 'send' | 'msg';
  path: string;
  key: string;
  body: Record<string, unknown>;
  idem: string;
  /** Unique text in the note/content, to count how many copies exist. */
  marker: string;
  conv?: string;
  /** Key of the recipient of a send (who may accept it). */
  recipient?: string;
}

/** What the clients share. */
export interface WorkloadState {
  model: CrashModel;
  dataDir: string;
  /** Operations this build serves, as `post /wallet/send`. */
  has: Set<string>;
  retries: Retry[];
  seq: number;
  maxUsers: number;
  /** 5xx answers seen by the clients (must stay empty). */
  serverErrors: string[];
  /** Contact requests in flight, as `requesterKey>recipientKey`. */
  requesting: Set<string>;
}

type Outcome = { res?: WireResponse; failed: boolean };

/** A request that may die with the server: failed = no answer. Internal. */
async function attempt(
  s: WorkloadState,
  url: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  idem?: string,
): Promise<Outcome> {
  let res: WireResponse;
  try {
    res = await call(url, method, path, key, body, idem ? { 'idempotency-key': idem } : {});
  } catch {
    return { failed: true };
  }
  if (res.status >= 500) s.serverErrors.push(`${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  return { res, failed: false };
}

const ok = (o: Outcome) => !!o.res && o.res.status < 300;
const refused = (o: Outcome) => !!o.res && o.res.status >= 400 && o.res.status < 500;

/** Users whose creation was acknowledged and verified present. Internal. */
const users = (s: WorkloadState) =>
  [...s.model.items.values()].filter((t) => t.kind === 'user' && t.allowed.has('present'));

/**
 * One client of the crash loop: until `stop()` is true, does a random write (users and grants
 * through the admin socket; sends, accepts, declines, messages, contact requests and answers,
 * contact removals, introductions and answers through the API) and records every acknowledged
 * write in the model. Requests cut off by the kill are left "unknown"; those with an
 * Idempotency-Key are queued to be retried after the restart. `adminDir` is the data dir of the
 * server at `url` (its admin socket; default `s.dataDir`).
 */
export async function runClient(
  url: string,
  s: WorkloadState,
  rnd: Prng,
  stop: () => boolean,
  adminDir = s.dataDir,
): Promise<void> {
  while (!stop()) {
    const people = users(s);
    const me = people.length ? rnd.pick(people) : undefined;
    const other = people.length > 1 ? rnd.pick(people.filter((u) => u !== me)) : undefined;
    const roll = rnd.next();
    const n = ++s.seq;
    if (!me || !other || (roll < 0.04 && people.length < s.maxUsers)) {
      try {
        const u = (await callAdmin(adminDir, 'users.add', { name: `crash user ${n}` }, 10_000)) as {
          id: string;
          pin_code: string;
          api_key: string;
        };
        s.model.created('user', u.id, 'present', { key: u.api_key, pin: u.pin_code }, 'user (admin socket)');
        if (s.has.has('get /wallet/balance')) {
          // A starting balance, as `users add --balance` gives: an operator grant.
          const t = (await callAdmin(adminDir, 'users.grant', { pin: u.pin_code, amount: 100 }, 10_000)) as {
            id: string;
          };
          s.model.created('txn', t.id, 'accepted', { owner: u.api_key }, 'grant (admin socket)');
        }
      } catch {
        if (stop()) return;
      }
      continue;
    }
    const mk = me.meta.key!;
    if (roll < 0.1 && s.has.has('get /wallet/balance')) {
      try {
        const t = (await callAdmin(adminDir, 'users.grant', { pin: me.meta.pin, amount: rnd.int(1, 50) }, 10_000)) as {
          id: string;
        };
        s.model.created('txn', t.id, 'accepted', { owner: mk }, 'grant (admin socket)');
      } catch {
        if (stop()) return;
      }
    } else if (roll < 0.3 && s.has.has('post /wallet/send')) {
      const marker = `cl${n}x`;
      const body = { recipient_pin: other.meta.pin!, amount: rnd.int(1, 300) / 100, note: `${marker} crash loop` };
      const idem = `send-${n}`;
      const o = await attempt(s, url, 'POST', '/api/v1/wallet/send', mk, body, idem);
      if (ok(o))
        s.model.created(
          'txn',
          (o.res!.json as { transaction: { id: string } }).transaction.id,
          'pending',
          { owner: mk, recipient: other.meta.key!, note: marker },
          'send',
        );
      else if (o.failed)
        s.retries.push({
          kind: 'send',
          path: '/api/v1/wallet/send',
          key: mk,
          body,
          idem,
          marker,
          recipient: other.meta.key!,
        });
    } else if (roll < 0.42 && s.has.has('post /wallet/transactions/{id}/accept')) {
      const t = pickFree(s, rnd, 'txn', 'pending', (x) => !!x.meta.recipient);
      if (t)
        await transition(url, s, t, rnd.chance(0.7) ? 'accepted' : 'declined', (to) => [
          'POST',
          `/api/v1/wallet/transactions/${t.id}/${to === 'accepted' ? 'accept' : 'decline'}`,
          t.meta.recipient!,
        ]);
    } else if (roll < 0.62 && s.has.has('post /messages/send')) {
      const marker = `cl${n}x`;
      const conv = rnd.chance(0.4) ? pickFree(s, rnd, 'msg', 'present') : undefined;
      const idem = `msg-${n}`;
      const body = { content: `${marker} hello`, ...(conv ? {} : { recipient_pin: other.meta.pin! }) };
      const path = conv ? `/api/v1/conversations/${conv.meta.conv}/messages` : '/api/v1/messages/send';
      const key = conv ? conv.meta.key! : mk;
      const o = await attempt(s, url, 'POST', path, key, body, idem);
      if (ok(o)) {
        const m = o.res!.json as { id: string; conversation_id: string };
        s.model.created('msg', m.id, 'present', { conv: m.conversation_id, key }, 'message');
      } else if (o.failed) s.retries.push({ kind: 'msg', path, key, body, idem, marker, conv: conv?.meta.conv });
    } else if (roll < 0.72 && s.has.has('post /contacts/request')) {
      // If `other` already asked `me`, this request accepts theirs (mutual intent): that request
      // may leave the pending state now, so it is in flight too.
      // Not while the other way is in flight (its request not yet answered, or being answered):
      // the server could pair them before the model knows the first one exists.
      const pair = `${mk}>${other.meta.key}`;
      const reverseAny = [...s.model.items.values()].find(
        (x) =>
          x.kind === 'creq' &&
          x.allowed.has('pending') &&
          x.meta.requester === other.meta.key &&
          x.meta.recipient === mk,
      );
      if (reverseAny?.busy || s.requesting.has(`${other.meta.key}>${mk}`)) continue;
      s.requesting.add(pair);
      const reverse = s.model.free(
        'creq',
        'pending',
        (x) => x.meta.requester === other.meta.key && x.meta.recipient === mk,
      )[0];
      const endReverse = reverse ? s.model.begin(reverse, 'gone', 'contact request (mutual)') : undefined;
      const o = await attempt(s, url, 'POST', '/api/v1/contacts/request', mk, { pin_code: other.meta.pin });
      s.requesting.delete(pair);
      const r = ok(o) ? (o.res!.json as { id: string; status: string }) : undefined;
      if (r?.status === 'pending')
        s.model.created('creq', r.id, 'pending', { recipient: other.meta.key!, requester: mk }, 'contact request');
      endReverse?.(r?.status === 'accepted' ? 'acked' : o.failed ? 'unknown' : 'refused');
      if (r?.status === 'accepted' && !reverse) s.model.ack('contact request (mutual)');
    } else if (roll < 0.8 && s.has.has('post /contacts/requests/{id}/accept')) {
      const t = pickFree(s, rnd, 'creq', 'pending');
      if (t) {
        const accept = rnd.chance(0.7);
        await transition(
          url,
          s,
          t,
          'gone',
          () => ['POST', `/api/v1/contacts/requests/${t.id}/${accept ? 'accept' : 'decline'}`, t.meta.recipient!],
          (res) => {
            const c = (res.json as { contact?: { id: string } }).contact;
            if (c)
              s.model.created(
                'contact',
                c.id,
                'present',
                { owner: t.meta.recipient!, other: t.meta.requester! },
                'contact (accepted)',
              );
          },
        );
      }
    } else if (roll < 0.84 && s.has.has('delete /contacts/{id}')) {
      const t = pickFree(s, rnd, 'contact', 'present');
      if (t) await transition(url, s, t, 'gone', () => ['DELETE', `/api/v1/contacts/${t.id}`, t.meta.owner!]);
    } else if (roll < 0.92 && s.has.has('post /introductions') && people.length >= 3) {
      const [a, b] = people.filter((u) => u !== me).sort(() => rnd.next() - 0.5);
      const o = await attempt(s, url, 'POST', '/api/v1/introductions', mk, {
        participant_pins: [a!.meta.pin, b!.meta.pin],
        message: `cl${n}x intro`,
      });
      if (ok(o))
        s.model.created(
          'intro',
          (o.res!.json as { id: string }).id,
          'pending',
          { introducer: mk, parts: `${a!.meta.key},${b!.meta.key}`, answered: '' },
          'introduction',
        );
    } else if (s.has.has('post /introductions/{id}/accept')) {
      const t = pickFree(
        s,
        rnd,
        'intro',
        'pending',
        (x) => !x.meta.frozen && x.meta.parts!.split(',').some((k) => !x.meta.answered!.includes(k)),
      );
      if (!t) continue;
      const who = t.meta.parts!.split(',').find((k) => !t.meta.answered!.includes(k))!;
      const accept = rnd.chance(0.8);
      const last = t.meta.answered!.split(',').filter(Boolean).length === 1;
      const target = !accept ? 'declined' : last ? 'accepted' : 'pending';
      await transition(
        url,
        s,
        t,
        target,
        () => ['POST', `/api/v1/introductions/${t.id}/${accept ? 'accept' : 'decline'}`, who],
        () => (t.meta.answered += `${who},`),
        () => (t.meta.frozen = '1'),
      );
    }
  }
}

/** A random free resource of a kind in a state. Internal. */
function pickFree(
  s: WorkloadState,
  rnd: Prng,
  kind: Tracked['kind'],
  state: string,
  where?: (t: Tracked) => boolean,
): Tracked | undefined {
  const list = s.model.free(kind, state, where);
  return list.length ? rnd.pick(list) : undefined;
}

/** Moves `t` to `target` with one request and records the outcome. Internal. */
async function transition(
  url: string,
  s: WorkloadState,
  t: Tracked,
  target: string,
  req: (to: string) => [string, string, string],
  onAck?: (res: WireResponse) => void,
  onUnknown?: () => void,
): Promise<void> {
  const [method, path, key] = req(target);
  const end = s.model.begin(t, target, `${t.kind} → ${target}`);
  const o = await attempt(s, url, method, path, key, method === 'POST' ? {} : undefined);
  if (ok(o)) {
    end('acked');
    onAck?.(o.res!);
  } else if (refused(o) && o.res!.status !== 409) end('refused');
  else {
    // No answer, or 409 (something else moved it first): the state is not ours to know until
    // the next verification reads it.
    end('unknown');
    onUnknown?.();
  }
}
