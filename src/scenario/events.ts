import { Conversations, Messages } from '../domain/messaging/collections.js';
import { ContactRequests } from '../domain/contacts/contact-requests.js';
import { Introductions } from '../domain/introductions/introductions.js';
import { Users } from '../domain/users/users.js';
import { Transactions } from '../domain/wallet/transactions.js';
import type { ReadView } from '../store/core/types.js';
import { apiGet } from './http.js';
import { matchValue, type Mismatch } from './match.js';
import type { EventKind, EventUser, JsonSchema, ScenarioEvent, TargetUser } from './types.js';

export type { EventKind, EventUser, ScenarioEvent } from './types.js';

const user = { type: 'string', minLength: 1, description: 'a user of the scenario (name) or a PIN' };
const any = { description: 'a value or a matcher' };

/** The filter keys of each kind, and their schema (the scenario JSON Schema uses these). */
export const EVENT_FILTERS: Record<
  EventKind,
  { description: string; users: string[]; properties: Record<string, JsonSchema> }
> = {
  message: {
    description: 'a message received by a user',
    users: ['to', 'from'],
    properties: {
      to: { ...user, description: 'who received it' },
      from: { ...user, description: 'who sent it' },
      content: any,
      conversation_id: any,
    },
  },
  transfer: {
    description: 'a transfer created or answered (type transfer unless `type` is given: ubi, grant)',
    users: ['to', 'from'],
    properties: {
      from: user,
      to: user,
      amount: any,
      status: any,
      note: any,
      type: { ...any, description: 'transfer (default), ubi or grant' },
    },
  },
  introduction: {
    description: 'an introduction made or answered',
    users: ['by', 'to'],
    properties: {
      by: { ...user, description: 'the introducer' },
      to: { ...user, description: 'one of the participants' },
      status: any,
      message: any,
    },
  },
  contact_request: {
    description: 'a contact request made or answered',
    users: ['from', 'to'],
    properties: { from: user, to: user, status: any },
  },
};

export const EVENT_KINDS = Object.keys(EVENT_FILTERS) as EventKind[];

/** True when a user field of an event is the user named by a filter value (name, PIN or display name). */
function isUser(field: unknown, want: string, users: Record<string, TargetUser>): boolean {
  const list = Array.isArray(field) ? (field as EventUser[]) : field ? [field as EventUser] : [];
  const pin = users[want]?.pin_code ?? want.trim().toUpperCase();
  return list.some((u) => u.name === want || u.pin_code === pin);
}

/** Why an event does not match a filter (empty when it does). */
export function eventMismatches(
  kind: EventKind,
  filter: Record<string, unknown>,
  ev: ScenarioEvent,
  users: Record<string, TargetUser>,
): Mismatch[] {
  const out: Mismatch[] = [];
  const spec = EVENT_FILTERS[kind];
  const f = { ...filter };
  if (kind === 'transfer' && f.type === undefined) f.type = 'transfer';
  for (const [k, want] of Object.entries(f)) {
    const field = k === 'to' && kind === 'introduction' ? ev.fields.participants : ev.fields[k];
    if (spec.users.includes(k)) {
      if (!isUser(field, String(want), users))
        out.push({ path: k, expected: JSON.stringify(want), actual: userText(field) });
    } else matchValue(want, field, k, out);
  }
  return out;
}

/** A short text for an event in reports: `message jar → alice "Thanks!"`. */
export function describeEvent(ev: ScenarioEvent): string {
  const f = ev.fields;
  switch (ev.kind) {
    case 'message':
      return `message ${userText(f.from)} → ${userText(f.to)} ${JSON.stringify(clip(String(f.content)))}`;
    case 'transfer':
      return `${f.type} ${f.amount} ${userText(f.from) ?? '(operator)'} → ${userText(f.to)} ${f.status}`;
    case 'introduction':
      return `introduction by ${userText(f.by)} of ${userText(f.participants)} ${f.status}`;
    case 'contact_request':
      return `contact request ${userText(f.from)} → ${userText(f.to)} ${f.status}`;
  }
}

function userText(u: unknown): string | undefined {
  if (Array.isArray(u)) return u.map((x) => (x as EventUser).name).join(', ');
  return (u as EventUser | null | undefined)?.name;
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

const order = (a: ScenarioEvent, b: ScenarioEvent) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * The events of a kind in an embedded server's store, oldest change first. Reading the store
 * spends nobody's rate limit and sees every user, bot users included.
 */
export function storeEvents(db: ReadView, kind: EventKind, names: ReadonlyMap<string, string>): ScenarioEvent[] {
  const who = (id: string | null): EventUser | null => {
    if (!id) return null;
    const u = db.col(Users).get(id);
    return { name: names.get(id) ?? u?.display_name ?? id, pin_code: u?.pin_code ?? '' };
  };
  const out: ScenarioEvent[] = [];
  if (kind === 'message') {
    for (const m of db.col(Messages).all()) {
      const conv = db.col(Conversations).get(m.conversation_id);
      for (const p of conv?.participant_ids ?? []) {
        if (p === m.sender_id) continue;
        out.push({
          key: `message:${m.id}:${p}`,
          kind,
          at: m.timestamp,
          fields: {
            id: m.id,
            from: who(m.sender_id),
            to: who(p),
            content: m.content,
            conversation_id: m.conversation_id,
          },
        });
      }
    }
  } else if (kind === 'transfer') {
    for (const t of db.col(Transactions).all()) {
      out.push({
        key: `transfer:${t.id}:${t.status}`,
        kind,
        at: t.updated_at,
        fields: {
          id: t.id,
          type: t.type,
          from: who(t.sender_id),
          to: who(t.recipient_id),
          amount: t.amount_cents / 100,
          status: t.status,
          note: t.note,
        },
      });
    }
  } else if (kind === 'introduction') {
    for (const i of db.col(Introductions).all()) {
      out.push({
        key: `introduction:${i.id}:${i.status}`,
        kind,
        at: i.updated_at,
        fields: {
          id: i.id,
          by: who(i.introducer_id),
          participants: i.participant_ids.map(who),
          status: i.status,
          message: i.message,
        },
      });
    }
  } else {
    for (const r of db.col(ContactRequests).all()) {
      out.push({
        key: `contact_request:${r.id}:${r.status}`,
        kind,
        at: r.updated_at,
        fields: { id: r.id, from: who(r.requester_id), to: who(r.recipient_id), status: r.status },
      });
    }
  }
  return out.sort(order);
}

/**
 * The events of a kind seen through the API by the scenario's users (remote mode): messages
 * in their conversations (the newest 200 of each), their transactions (newest 200),
 * introductions, and pending incoming contact requests.
 */
export async function apiEvents(
  baseUrl: string,
  users: Record<string, TargetUser>,
  kind: EventKind,
): Promise<ScenarioEvent[]> {
  const byPin = new Map(Object.values(users).map((u) => [u.pin_code, u.name]));
  const who = (u: { pin_code: string; display_name: string } | null): EventUser | null =>
    u ? { name: byPin.get(u.pin_code) ?? u.display_name, pin_code: u.pin_code } : null;
  const seen = new Map<string, ScenarioEvent>();
  const add = (ev: ScenarioEvent) => void (seen.has(ev.key) || seen.set(ev.key, ev));
  for (const u of Object.values(users)) {
    const get = (path: string) => apiGet(baseUrl, u.api_key, path);
    if (kind === 'message') {
      for (const c of (await get('/conversations')).conversations) {
        for (const m of (await get(`/conversations/${c.id}/messages?limit=200`)).messages) {
          if (m.sender.pin_code === u.pin_code) continue;
          add({
            key: `message:${m.id}:${u.id}`,
            kind,
            at: m.timestamp,
            fields: {
              id: m.id,
              from: who(m.sender),
              to: who(u),
              content: m.content,
              conversation_id: m.conversation_id,
            },
          });
        }
      }
    } else if (kind === 'transfer') {
      for (const t of (await get('/wallet/transactions?limit=200')).transactions) {
        add({
          key: `transfer:${t.id}:${t.status}`,
          kind,
          at: Date.parse(t.updated_at),
          fields: {
            id: t.id,
            type: t.type,
            from: who(t.sender),
            to: who(t.recipient),
            amount: t.amount,
            status: t.status,
            note: t.note,
          },
        });
      }
    } else if (kind === 'introduction') {
      for (const i of (await get('/introductions')).introductions) {
        add({
          key: `introduction:${i.id}:${i.status}`,
          kind,
          at: Date.parse(i.created_at),
          fields: {
            id: i.id,
            by: who(i.introducer),
            participants: i.participants.map(who),
            status: i.status,
            message: i.message,
          },
        });
      }
    } else {
      for (const r of (await get('/contacts/requests/pending')).requests) {
        add({
          key: `contact_request:${r.id}:pending`,
          kind,
          at: Date.parse(r.created_at),
          fields: { id: r.id, from: who(r.requester), to: who(u), status: 'pending' },
        });
      }
    }
  }
  return [...seen.values()].sort(order);
}
