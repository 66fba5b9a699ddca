import { configFrom } from '../../src/config/load.js';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { Messages, type ConversationRecord } from '../../src/domain/messaging/collections.js';
import { createGroup, directConversation } from '../../src/domain/messaging/conversations.js';
import { postMessage } from '../../src/domain/messaging/messages.js';
import { FileStore } from '../../src/store/file/file-store.js';
import { addUsers, type BenchUser } from './users.js';

/** How the messages data set is laid out, for the benches that use it. */
export interface MessagesMeta {
  users: BenchUser[];
  /** Direct conversations: `direct[i]` is between `users[2i]` and `users[2i + 1]`. */
  direct: string[];
  /** The big group conversation, and its participants (indexes into `users`). */
  big: { id: string; participants: number[]; messages: number; pollSince: number; pollNew: number };
  messages: number;
}

export interface MessagesParams {
  /** Messages in the whole store. */
  messages: number;
  /** Of which in the big group conversation. */
  big: number;
  /** Users (even; half of them pair up into direct conversations). */
  users: number;
  /** Messages newer than `pollSince` in the big conversation (what one poll returns). */
  pollNew: number;
}

/** A message body like a person's: ~80 characters, varied so no two journal lines are alike. */
function content(n: number): string {
  return `message ${n}: the quick brown fox jumps over the lazy dog, then checks the wallet.`;
}

const BATCH = 5000;

/**
 * The `messages` data set: `users` users with keys; a direct conversation for each pair of
 * users; a group of 50 (users 100–149, or the last 50) holding `big` messages; the other
 * messages spread round-robin over the direct conversations. Everything goes through
 * FileStore and the messaging domain functions, on a virtual clock one millisecond per message
 * ending an hour before now, so new messages sort after the generated ones.
 *
 * @example await generateMessages(dir, { messages: 1_000_000, big: 100_000, users: 200, pollNew: 10 });
 */
export async function generateMessages(dataDir: string, p: MessagesParams): Promise<MessagesMeta> {
  // One snapshot at the end rather than a compaction every 64 MB of journal on the way.
  const store = await FileStore.open(dataDir, { compactBytes: Number.MAX_SAFE_INTEGER });
  const clock = new VirtualClock(Date.now() - p.messages - 3_600_000);
  const env: DomainEnv = { clock, config: configFrom({}) };
  const users = await addUsers(store, env, p.users);
  const groupFrom = Math.max(0, Math.min(100, p.users - 50));
  const participants = Array.from({ length: Math.min(50, p.users) }, (_, i) => groupFrom + i);
  const { direct, big } = await store.transaction((tx) => {
    const direct: ConversationRecord[] = [];
    for (let i = 0; i + 1 < users.length; i += 2) direct.push(directConversation(tx, env, users[i]!.id, users[i + 1]!.id).conversation);
    const big = createGroup(tx, env, participants.map((i) => users[i]!.id), 'bench-big');
    return { direct, big };
  });
  // Interleave the big conversation's messages with the others, as they would arrive.
  const others = p.messages - p.big;
  let bigLeft = p.big;
  let otherLeft = others;
  let n = 0;
  while (n < p.messages) {
    await store.transaction((tx) => {
      for (let k = 0; k < BATCH && n < p.messages; k++, n++) {
        clock.set(clock.now() + 1);
        const toBig = bigLeft > 0 && (otherLeft === 0 || (p.big - bigLeft) * p.messages < (n + 1) * p.big);
        if (toBig) {
          const sender = users[participants[bigLeft % participants.length]!]!;
          postMessage(tx, env, big, sender.id, content(n));
          bigLeft--;
        } else {
          const c = (others - otherLeft) % direct.length;
          const sender = users[2 * c + ((others - otherLeft) % 2)]!;
          postMessage(tx, env, direct[c]!, sender.id, content(n));
          otherLeft--;
        }
      }
    });
  }
  const bigIds = store.read.col(Messages).ids('conversation', big.id);
  const pollNew = Math.min(p.pollNew, bigIds.length);
  const pollSince = bigIds.length > pollNew ? store.read.col(Messages).get(bigIds[bigIds.length - pollNew - 1]!)!.timestamp : 0;
  await store.close();
  return { users, direct: direct.map((c) => c.id), big: { id: big.id, participants, messages: bigIds.length, pollSince, pollNew }, messages: p.messages };
}
