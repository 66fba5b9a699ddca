// The start-up checks of a data directory's store, assembled where every layer is visible (the
// store itself imports none of them). A new collection is added to COLLECTIONS, or its journal
// lines are refused at the next start (test/store/integrity.test.ts checks the list).
import { IdempotencyRecords } from '../api/writes/idempotency.js';
import { ContactRequests } from '../domain/contacts/contact-requests.js';
import { Contacts } from '../domain/contacts/contacts.js';
import { Introductions } from '../domain/introductions/introductions.js';
import { ConversationActivity, Conversations, Messages } from '../domain/messaging/collections.js';
import { Usage } from '../domain/quotas.js';
import { Keys } from '../domain/users/keys.js';
import { Users } from '../domain/users/users.js';
import { Accounts } from '../domain/wallet/accounts.js';
import { walletIntegrity } from '../domain/wallet/integrity.js';
import { Subscriptions } from '../domain/wallet/subscription.js';
import { Transactions } from '../domain/wallet/transactions.js';
import { BotCursors, BotDialogs, BotInbox, BotMemories, BotMetas, PluginStates } from '../runtime/index.js';
import { BotKeys } from './bot-key-vault.js';
import { BotLeases, BotWorkers } from './bot-leases.js';
import { ClockState } from './virtual-time.js';
import type { StoreIntegrity } from '../store/core/integrity.js';
import type { CollectionDef, StoredRecord } from '../store/core/types.js';

/** The definitions of every collection a data directory's store holds. */
export const COLLECTION_DEFS: readonly CollectionDef<StoredRecord>[] = [
  Users,
  Keys,
  Accounts,
  Transactions,
  Subscriptions,
  Contacts,
  ContactRequests,
  Introductions,
  Conversations,
  ConversationActivity,
  Messages,
  IdempotencyRecords,
  BotMetas,
  BotCursors,
  BotInbox,
  BotDialogs,
  PluginStates,
  ClockState,
  BotWorkers,
  BotLeases,
  BotKeys,
  Usage,
  BotMemories,
] as unknown as CollectionDef<StoredRecord>[];

/** Every collection a data directory's store holds. */
export const COLLECTIONS: readonly string[] = COLLECTION_DEFS.map((c) => c.name);

/**
 * What `serve` and the offline CLI check when they open a data directory: known collections,
 * wallet records, and conservation of money.
 *
 * @example FileStore.open(dir, { integrity: dataDirIntegrity })
 */
export const dataDirIntegrity: StoreIntegrity = { collections: COLLECTIONS, ...walletIntegrity };
