import type { CrashModel, Tracked } from './crash-model.js';
import type { Retry } from './crash-workload.js';
import { call } from './http.js';
import { invariantOf, walletSnapshot, type MoneyFigures } from './money.js';

export interface VerifyResult {
  /** Acknowledged writes the server does not show as acknowledged. Must be empty. */
  lost: string[];
  /** Idempotent retries of writes cut off by the kill, and those that happened twice (must be 0). */
  retried: number;
  duplicates: string[];
  /** Money invariant (in cents), when this build has a wallet. */
  money?: MoneyFigures;
}

/**
 * A GET that must work. 401 (the key's user is gone) and 404 (the resource is gone) are data
 * loss, reported through the items that depend on them, so they give undefined; anything else
 * is a bug of the server and throws.
 */
async function getJson<T>(url: string, path: string, key: string): Promise<T | undefined> {
  const res = await call(url, 'GET', path, key);
  if (res.status === 401 || res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res.json as T;
}

/** Every message id and content of a conversation, paging with `since`. Internal. */
async function allMessages(url: string, conv: string, key: string): Promise<Array<{ id: string; content: string }>> {
  const out: Array<{ id: string; content: string }> = [];
  let since = 0;
  for (;;) {
    const page = await getJson<{
      messages: Array<{ id: string; content: string }>;
      timestamp: number;
      has_more: boolean;
    }>(url, `/api/v1/conversations/${conv}/messages?since=${since}&limit=200`, key);
    if (!page) return out;
    out.push(...page.messages);
    if (!page.has_more || page.messages.length === 0) return out;
    since = page.timestamp;
  }
}

/**
 * After a restart: first retries the writes the kill cut off (same Idempotency-Key, same body),
 * then reads everything back through the API and checks that every acknowledged write is there
 * in an allowed state, that each retried write exists exactly once, and that the money
 * invariant holds (sum of balances + pending = UBI + grants, over every tracked user).
 *
 * @example
 * const v = await verifyAfterRestart(url, model, state.retries, has);
 */
export async function verifyAfterRestart(
  url: string,
  model: CrashModel,
  retries: Retry[],
  has: Set<string>,
): Promise<VerifyResult> {
  const r: VerifyResult = { lost: [], retried: 0, duplicates: [] };
  const once: Array<{ retry: Retry; conv?: string }> = [];
  for (const retry of retries.splice(0)) {
    const res = await call(url, 'POST', retry.path, retry.key, retry.body, { 'idempotency-key': retry.idem });
    r.retried++;
    if (res.status >= 500) throw new Error(`retry of ${retry.path} answered ${res.status}: ${res.text}`);
    if (res.status < 300 && retry.kind === 'send') {
      const id = (res.json as { transaction: { id: string } }).transaction.id;
      model.created(
        'txn',
        id,
        'pending',
        { owner: retry.key, recipient: retry.recipient ?? '', note: retry.marker },
        'send (retried)',
      );
    }
    const conv =
      retry.conv ?? (res.status < 300 ? (res.json as { conversation_id?: string }).conversation_id : undefined);
    if (res.status < 300 && retry.kind === 'msg')
      model.created(
        'msg',
        (res.json as { id: string }).id,
        'present',
        { conv: conv!, key: retry.key },
        'message (retried)',
      );
    once.push({ retry, conv });
  }

  const items = [...model.items.values()];
  const users = items.filter((t) => t.kind === 'user');
  const byKind = (k: Tracked['kind']) => items.filter((t) => t.kind === k);
  const check = (t: Tracked, observed: string) => {
    const expected = [...t.allowed].join('|');
    if (!model.observe(t, observed)) r.lost.push(`${t.kind} ${t.id}: acknowledged as ${expected}, found ${observed}`);
  };

  const live: Tracked[] = [];
  for (const u of users) {
    const me = await call(url, 'GET', '/api/v1/me', u.meta.key);
    const found = me.status === 200 && (me.json as { pin_code: string }).pin_code === u.meta.pin;
    check(u, found ? 'present' : `missing (${me.status})`);
    if (found) live.push(u);
  }

  if (has.has('get /wallet/transactions')) {
    const snap = await walletSnapshot(
      url,
      live.map((u) => u.meta.key!),
    );
    if (!snap) throw new Error('a present user could not read the wallet');
    for (const t of byKind('txn')) check(t, snap.txns.get(t.id)?.status ?? 'missing');
    // With a user lost the sums cover a different set of people: the loss is already reported.
    if (live.length === users.length) r.money = invariantOf(snap, live.length);
    for (const { retry } of once.filter((o) => o.retry.kind === 'send')) {
      const copies = [...snap.txns.values()].filter((t) => t.note?.startsWith(`${retry.marker} `)).length;
      if (copies > 1) r.duplicates.push(`send ${retry.marker} exists ${copies} times after an idempotent retry`);
    }
  }

  const convs = new Map<string, { key: string; msgs: Tracked[] }>();
  for (const m of byKind('msg')) {
    const c = convs.get(m.meta.conv!) ?? { key: m.meta.key!, msgs: [] };
    c.msgs.push(m);
    convs.set(m.meta.conv!, c);
  }
  const contents = new Map<string, string[]>();
  for (const [conv, { key, msgs }] of convs) {
    const list = await allMessages(url, conv, key);
    contents.set(
      conv,
      list.map((m) => m.content),
    );
    const ids = new Set(list.map((m) => m.id));
    for (const m of msgs) check(m, ids.has(m.id) ? 'present' : 'missing');
  }
  for (const { retry, conv } of once.filter((o) => o.retry.kind === 'msg' && o.conv)) {
    const list = contents.get(conv!) ?? (await allMessages(url, conv!, retry.key)).map((m) => m.content);
    const copies = list.filter((c) => c.startsWith(`${retry.marker} `)).length;
    if (copies > 1) r.duplicates.push(`message ${retry.marker} exists ${copies} times after an idempotent retry`);
  }

  const perKey = async <T>(key: string, path: string, cache: Map<string, T | undefined>) => {
    if (!cache.has(key)) cache.set(key, await getJson<T>(url, path, key));
    return cache.get(key);
  };
  const pendingReqs = new Map<string, { requests: Array<{ id: string }> } | undefined>();
  for (const t of byKind('creq')) {
    const list = await perKey(t.meta.recipient!, '/api/v1/contacts/requests/pending', pendingReqs);
    check(t, !list ? 'unreadable' : list.requests.some((x) => x.id === t.id) ? 'pending' : 'gone');
  }
  const contacts = new Map<string, { contacts: Array<{ id: string }> } | undefined>();
  for (const t of byKind('contact')) {
    const list = await perKey(t.meta.owner!, '/api/v1/contacts', contacts);
    check(t, !list ? 'unreadable' : list.contacts.some((x) => x.id === t.id) ? 'present' : 'gone');
  }
  const intros = new Map<string, { introductions: Array<{ id: string; status: string }> } | undefined>();
  for (const t of byKind('intro')) {
    const list = await perKey(t.meta.introducer!, '/api/v1/introductions', intros);
    check(t, list?.introductions.find((x) => x.id === t.id)?.status ?? 'missing');
  }
  return r;
}
