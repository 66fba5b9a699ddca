import { walletBalance } from '../../domain/wallet/balance.js';
import { subscriptionView } from '../../domain/wallet/subscription.js';
import { listTransactions, pendingFor, transactionView } from '../../domain/wallet/transactions.js';
import { acceptTransfer, declineTransfer, sendMoney } from '../../domain/wallet/transfers.js';
import { formatAmount } from '../../domain/wallet/money.js';
import { defineRoute, type RouteDef } from '../route.js';
import { emptyBody, idParams } from '../schemas.js';
import {
  balanceSchema,
  pageSchema,
  pendingSchema,
  sendBody,
  subscriptionSchema,
  transactionResult,
  transactionsQuery,
} from './schemas.js';

const tags = ['wallet'];
const answerErrors = ['forbidden', 'transaction_not_found', 'transaction_not_pending'];

export const walletRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/wallet/balance',
    etag: true,
    etagSeesClock: true,
    summary: 'Your balance, subscription days and the next Shmita',
    description:
      'Your balance, the days left on your subscription (1 decimal) and the last day of the next Shmita year.',
    tags,
    schemas: { responses: { 200: balanceSchema } },
    handler: ({ db, env, user }) => ({ status: 200, body: walletBalance(db, env, user.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/wallet/send',
    summary: 'Send money to a PIN: debited now, pending until the recipient accepts or declines',
    description:
      'Sends money to a user by PIN. The amount (> 0, at most 2 decimals, at most ' +
      'wallet.max_transfer, else 400 invalid_amount) leaves your balance at once (400 ' +
      'insufficient_funds if it is short) and stays pending until the recipient ' +
      'accepts (credited to them) or declines (refunded to you).',
    tags,
    write: true,
    schemas: { body: sendBody, responses: { 201: transactionResult } },
    errors: ['invalid_amount', 'insufficient_funds', 'user_not_found', 'cannot_target_self', 'quota_exceeded'],
    handler: ({ tx, env, user, body }) => {
      const t = sendMoney(tx, env, user, body);
      const view = transactionView(tx, t, user.id);
      return {
        status: 201,
        body: {
          message: `Sent ${formatAmount(t.amount_cents)} to ${view.recipient.display_name}; pending until they accept.`,
          transaction: view,
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/wallet/transactions',
    etag: true,
    summary: 'Your transactions (sent and received, UBI, grants), newest first',
    description:
      'Your transactions — transfers sent and received, UBI credits, operator grants ' +
      '— newest first. Page with limit and before = the id of the last transaction ' +
      'you got.',
    tags,
    schemas: { query: transactionsQuery, responses: { 200: pageSchema } },
    handler: ({ db, user, query }) => ({ status: 200, body: listTransactions(db, user.id, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/wallet/pending',
    etag: true,
    summary: 'Incoming transfers awaiting your answer, newest first',
    description: 'Incoming transfers waiting for you to accept or decline, newest first.',
    tags,
    schemas: { responses: { 200: pendingSchema } },
    handler: ({ db, user }) => ({ status: 200, body: { pending_transactions: pendingFor(db, user.id) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/wallet/transactions/:id/accept',
    summary: 'Accept an incoming transfer: the amount is credited to you',
    description:
      'Accepts a transfer sent to you: the amount is credited to your balance. Takes ' +
      'no body. The sender gets 403 forbidden; anyone else 404; a transfer no longer ' +
      'pending 409 transaction_not_pending.',
    tags,
    write: true,
    schemas: { body: emptyBody, params: idParams, responses: { 200: transactionResult } },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => {
      const t = acceptTransfer(tx, env, user, params.id);
      return {
        status: 200,
        body: { message: `Accepted ${formatAmount(t.amount_cents)}.`, transaction: transactionView(tx, t, user.id) },
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/wallet/transactions/:id/decline',
    summary: 'Decline an incoming transfer: the amount goes back to the sender',
    description:
      'Declines a transfer sent to you: the amount goes back to the sender. Takes no ' +
      'body. The sender gets 403 forbidden; anyone else 404; a transfer no longer ' +
      'pending 409 transaction_not_pending.',
    tags,
    write: true,
    schemas: { body: emptyBody, params: idParams, responses: { 200: transactionResult } },
    errors: answerErrors,
    handler: ({ tx, env, user, params }) => {
      const t = declineTransfer(tx, env, user, params.id);
      return {
        status: 200,
        body: {
          message: `Declined ${formatAmount(t.amount_cents)}; it was refunded to the sender.`,
          transaction: transactionView(tx, t, user.id),
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/wallet/subscription',
    summary: 'Your subscription',
    description:
      'Your subscription: active until end_date (inclusive), expired after, none if ' +
      'you never had one. New users get a trial.',
    tags,
    schemas: { responses: { 200: subscriptionSchema } },
    handler: ({ db, env, user }) => ({ status: 200, body: subscriptionView(db, user.id, env.clock.now()) }),
  }),
];
