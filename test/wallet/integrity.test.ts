import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { createUser } from '../../src/domain/users/users.js';
import { Accounts } from '../../src/domain/wallet/accounts.js';
import { grantMoney } from '../../src/domain/wallet/grants.js';
import { sendMoney } from '../../src/domain/wallet/transfers.js';
import { dataDirIntegrity } from '../../src/deployment/store-integrity.js';
import { StoreDamagedError } from '../../src/store/core/errors.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { encodeEntry, type JournalEntry } from '../../src/store/file/journal-line.js';
import { tempDir } from '../helpers/api.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const opts = { integrity: dataDirIntegrity, warn: () => undefined };
const env = { clock: new VirtualClock(Date.parse('2026-11-21T12:00:00Z')), config: configFrom({}) };

function dir(): string {
  const t = tempDir('pinbot-money-');
  cleanups.push(t.cleanup);
  return t.dir;
}

/** Alice gets a grant of 10.00 and sends Bob 3.00 (pending): a data dir as a crash leaves it. */
async function books(): Promise<{ image: string; aliceId: string; live: FileStore }> {
  const live = await FileStore.open(dir(), opts);
  cleanups.push(() => live.close());
  const alice = await live.transaction((tx) => createUser(tx, env, { name: 'Alice' }));
  const bob = await live.transaction((tx) => createUser(tx, env, { name: 'Bob' }));
  await live.transaction((tx) => grantMoney(tx, env, alice.id, 1000));
  await live.transaction((tx) => sendMoney(tx, env, alice, { recipient_pin: bob.pin_code, amount: 3 }));
  const image = dir();
  cpSync(live.dir, image, { recursive: true });
  return { image, aliceId: alice.id, live };
}

const journal = (d: string) => join(d, 'journal.jsonl');

/** Rewrites the journal line whose changes include `alice`'s account, with a valid checksum. */
function forgeAccountLine(d: string, aliceId: string, change: (account: Record<string, unknown>) => void): number {
  const ls = readFileSync(journal(d), 'utf8').split('\n').filter(Boolean);
  const i = ls.findIndex((l) => l.includes(`"${Accounts.name}","${aliceId}"`));
  const e = JSON.parse(ls[i]!) as JournalEntry;
  for (const c of e.c) if (c[0] === Accounts.name && c[2]) change(c[2] as unknown as Record<string, unknown>);
  ls[i] = encodeEntry(e.s, e.c).trimEnd();
  writeFileSync(journal(d), ls.map((l) => l + '\n').join(''));
  return i + 1;
}

async function refused(d: string): Promise<string> {
  const err = await FileStore.open(d, opts).then(
    (s) => (cleanups.push(() => s.close()), undefined),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreDamagedError);
  return (err as Error).message;
}

describe('start-up checks of money (issue 13, item 4)', () => {
  it('opens books that balance', async () => {
    const { image, aliceId } = await books();
    const store = await FileStore.open(image, opts);
    cleanups.push(() => store.close());
    expect(store.read.col(Accounts).get(aliceId)?.balance_cents).toBe(700);
  });

  it('refuses a journal line that edits a balance (checksum recomputed): money is not conserved', async () => {
    const { image, aliceId } = await books();
    const line = forgeAccountLine(image, aliceId, (a) => (a.balance_cents = (a.balance_cents as number) + 500));
    expect(await refused(image)).toContain(
      `${journal(image)}:${line}: this transaction changes money (balances + pending − UBI − grants, in cents) by +500`,
    );
  });

  it.each([
    ['a negative balance', -5, 'balance_cents is -5, not whole cents ≥ 0'],
    ['a fractional balance', 0.5, 'balance_cents is 0.5, not whole cents ≥ 0'],
    ['a balance that is not a number', '1000', 'balance_cents is "1000"'],
  ])('refuses %s in a journal line', async (_, value, message) => {
    const { image, aliceId } = await books();
    const line = forgeAccountLine(image, aliceId, (a) => (a.balance_cents = value));
    expect(await refused(image)).toContain(`${journal(image)}:${line}: wallet_accounts ${aliceId}: ${message}`);
  });

  it('refuses a snapshot whose money does not add up', async () => {
    const { live, aliceId } = await books();
    await live.close();
    const db = join(live.dir, 'db.json');
    const text = readFileSync(db, 'utf8');
    const edited = text.replace(new RegExp(`("id":"${aliceId}","balance_cents":)700`), '$17000');
    expect(edited).not.toBe(text);
    writeFileSync(db, edited);
    expect(await refused(live.dir)).toContain(
      `${db}: money does not add up: balances 7000 + pending 300 ≠ UBI + grants 1000 (cents)`,
    );
  });
});
