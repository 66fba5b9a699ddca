import { iso } from '../clock/clock.js';
import { AdminError } from './errors.js';
import { type AdminArgs, type AdminContext, type CommandTable, defineCommand } from './define.js';
import { VirtualClock } from '../clock/virtual-clock.js';
import { createKey, Keys, listKeys, revokeKey } from '../domain/users/keys.js';
import { createUser, publicUser, Users, userByPin, usersNamed } from '../domain/users/users.js';
import { parseDuration } from '../util/duration.js';
import { DomainError } from '../domain/errors.js';
import { grantMoney } from '../domain/wallet/grants.js';
import { CENTS, MAX_GRANT, parseAmountText } from '../domain/wallet/money.js';
import { MAX_SUBSCRIBE_DAYS, subscribe } from '../domain/wallet/subscription.js';
import { transactionView } from '../domain/wallet/transactions.js';

export type { AdminArgs, AdminCommand, AdminContext, ArgsOf, CommandTable, ResultOf } from './define.js';
export { defineCommand } from './define.js';

export { AdminError } from './errors.js';

function str(args: AdminArgs, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.trim() === '')
    throw AdminError.forArg(name, `--${name.replace(/_/g, '-')}`, 'is required');
  return v;
}

/** Finds a user by PIN for a command, with an operator-facing error. */
function pinUser(ctx: AdminContext, pin: string) {
  try {
    return userByPin(ctx.store.read, pin);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'user_not_found')
      throw new AdminError(`no user has the PIN ${pin.trim().toUpperCase()}; see \`pinbot users list\``);
    throw err;
  }
}

/** Parses an operator's amount (`--amount 12.50`) into cents, or says how to write it. */
function cents(args: AdminArgs, name: string, { zero = false } = {}): number {
  const c = parseAmountText(String(args[name] ?? ''));
  if (c === undefined || (!zero && c === 0) || c > MAX_GRANT * CENTS) {
    const range = `${zero ? '≥ 0' : '> 0'} with at most 2 decimals and at most ${MAX_GRANT}, e.g. 25 or 12.50`;
    throw AdminError.forArg(name, `--${name}`, `must be a number ${range}`);
  }
  return c;
}

/** Every operator command, shared by the admin socket and the offline CLI. */
export const adminCommands = {
  'users.add': defineCommand<{ name: string; balance?: string; allow_duplicate?: boolean }>()(async (ctx, args) => {
    const name = str(args, 'name');
    if (name.trim().length > 100) throw AdminError.forArg('name', '--name', 'is at most 100 characters');
    const balance = args.balance === undefined ? 0 : cents(args, 'balance', { zero: true });
    const allowDuplicate = args.allow_duplicate === true;
    const { user, key, namesakes } = await ctx.store.transaction((tx) => {
      // a second user of one name makes the name ambiguous: `as: NAME` bots could no longer find theirs
      const namesakes = usersNamed(tx, name);
      if (namesakes.length && !allowDuplicate) {
        // name the users as they are written ("Alice"), not as typed (" alice "): names match in any case
        const named = [...new Set(namesakes.map((u) => `"${u.display_name}"`))].join(' or ');
        const pins = namesakes.map((u) => u.pin_code).join(', ');
        throw new AdminError(
          `a user named ${named} already exists (PIN ${pins}): a second one makes the name ambiguous, ` +
            `and bots or scripts that name it (as: ${name.trim()}) would have to use the PIN. ` +
            'Choose another name, or add --allow-duplicate to create it anyway',
        );
      }
      const user = createUser(tx, ctx.env, { name });
      if (balance > 0) grantMoney(tx, ctx.env, user.id, balance, 'starting balance');
      return { user, key: createKey(tx, ctx.env, user.id), namesakes };
    });
    const warning = namesakes.length
      ? `${namesakes.length + 1} users are now named "${user.display_name}" ` +
        `(${[...namesakes.map((u) => u.pin_code), user.pin_code].join(', ')}): name ` +
        `them by PIN`
      : undefined;
    return { ...publicUser(user), api_key: key.api_key, ...(warning ? { warning } : {}) };
  }),
  'users.list': defineCommand()(async (ctx) => {
    const users = [...ctx.store.read.col(Users).all()].sort((a, b) => (a.id < b.id ? -1 : 1));
    return { users: users.map(publicUser) };
  }),
  'users.grant': defineCommand<{ pin: string; amount: string }>()(async (ctx, args) => {
    const user = pinUser(ctx, str(args, 'pin'));
    const amount = cents(args, 'amount');
    return ctx.store.transaction((tx) => transactionView(tx, grantMoney(tx, ctx.env, user.id, amount), user.id));
  }),
  'users.subscribe': defineCommand<{ pin: string; days: string }>()(async (ctx, args) => {
    const user = pinUser(ctx, str(args, 'pin'));
    const days = Number(args.days);
    if (!Number.isInteger(days) || days < 1 || days > MAX_SUBSCRIBE_DAYS)
      throw new AdminError(`--days must be a whole number from 1 to ${MAX_SUBSCRIBE_DAYS}`);
    return ctx.store.transaction((tx) => subscribe(tx, ctx.env, user.id, days));
  }),
  'keys.create': defineCommand<{ pin: string }>()(async (ctx, args) => {
    const user = pinUser(ctx, str(args, 'pin'));
    return ctx.store.transaction((tx) => createKey(tx, ctx.env, user.id));
  }),
  'keys.list': defineCommand<{ pin: string }>()(async (ctx, args) => {
    const user = pinUser(ctx, str(args, 'pin'));
    return { keys: listKeys(ctx.store.read, user.id, ctx.keyUsage) };
  }),
  'keys.revoke': defineCommand<{ id: string }>()(async (ctx, args) => {
    const id = str(args, 'id');
    const found = await ctx.store.transaction((tx) => revokeKey(tx, ctx.env, id));
    if (!found) throw new AdminError(`no key has the id ${id}; see \`pinbot keys list --pin PIN\``);
    const k = ctx.store.read.col(Keys).get(id)!;
    return { id, revoked_at: iso(k.revoked_at!) };
  }),
  'clock.advance': defineCommand<{ duration: string }>()(async (ctx, args) => {
    const clock = virtualClock(ctx);
    const ms = parseDuration(str(args, 'duration'));
    if (ms === undefined) throw AdminError.forArg('duration', 'DURATION', 'is like 90s, 15m, 2h or 3d');
    await clock.advance(ms);
    return { now: iso(clock.now()) };
  }),
  'clock.set': defineCommand<{ iso: string }>()(async (ctx, args) => {
    const clock = virtualClock(ctx);
    const text = str(args, 'iso');
    const ms = Date.parse(text);
    if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(text))
      throw AdminError.forArg('iso', 'ISO', 'is a date-time like 2026-12-01T09:00:00Z');
    await clock.advanceTo(ms);
    return { now: iso(clock.now()) };
  }),
} satisfies CommandTable;

function virtualClock(ctx: AdminContext): VirtualClock {
  if (!ctx.scheduler)
    throw new AdminError('clock commands need a running `pinbot serve --virtual-clock` on this data directory');
  if (!(ctx.env.clock instanceof VirtualClock))
    throw new AdminError('this server runs on the real clock; restart it with `pinbot serve --virtual-clock`');
  return ctx.env.clock;
}

/** Runs a command by name (the admin socket and the offline CLI both come here). */
export async function runAdminCommand(ctx: AdminContext, name: string, args: AdminArgs): Promise<unknown> {
  // Own properties only: a plain object also answers `constructor`, `toString`, `__proto__` …
  // (`constructor` ran Object(ctx) and sent the whole context back).
  const own = (table: CommandTable | undefined) =>
    table && typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;
  const cmd = own(ctx.extra) ?? own(adminCommands);
  if (!cmd) throw new AdminError(`unknown admin command ${name}`);
  try {
    return await cmd(ctx, args);
  } catch (err) {
    // a rule of the domain refused: its message is written for a person, the operator included
    if (err instanceof DomainError) throw new AdminError(err.message);
    throw err;
  }
}
