import type { UserRef } from '../../../client/types.js';
import type { ReplyTarget, TriggerDef } from '../../contract/types.js';

const user = (name: string, pin: string): UserRef => ({
  id: `usr_${name.toLowerCase()}`,
  display_name: name,
  pin_code: pin,
});
const BOB = user('Bob', 'BOB123');
const JAR = user('Tip Jar', 'JAR123');
const CAROL = user('Carol', 'CAR123');
const AT = '2026-11-21T12:00:00.000Z';

const u = (v: unknown) => v as UserRef | undefined;
const toPin = (x: UserRef | undefined): ReplyTarget | undefined => (x ? { pin: x.pin_code } : undefined);

const participantsOf = (e: Record<string, unknown>) => (e.participants as UserRef[] | undefined) ?? [];

/** `transfer.accepted` / `transfer.declined`: one of the bot's transfers answered. Internal. */
const sentTransfer = (status: 'accepted' | 'declined', description: string, id: string): TriggerDef => ({
  name: `transfer.${status}`,
  completeExample: true,
  description,
  source: 'sent_transfers',
  example: {
    id,
    type: 'transfer',
    amount: 2,
    status,
    direction: 'sent',
    note: '',
    sender: JAR,
    recipient: BOB,
    sender_pin: JAR.pin_code,
    recipient_pin: BOB.pin_code,
    created_at: AT,
    updated_at: AT,
  },
  actor: (e) => u(e.recipient),
  replyTo: (e) => toPin(u(e.recipient)),
});

/** The triggers fed by the poll sources (one event per new item). */
export const polledTriggers: TriggerDef[] = [
  {
    name: 'message.received',
    completeExample: true,
    description:
      "Someone else wrote in a conversation the bot is in (direct or group). The bot's own messages never trigger it.",
    source: 'messages',
    example: {
      id: 'msg_01',
      conversation_id: 'cnv_01',
      content: 'hello',
      sender: BOB,
      timestamp: 1795262400000,
      created_at: AT,
      conversation: { id: 'cnv_01', type: 'direct', name: null, participants: [BOB, JAR] },
    },
    actor: (e) => u(e.sender),
    replyTo: (e) => ({ conversation_id: String(e.conversation_id) }),
  },
  {
    name: 'transfer.received',
    completeExample: true,
    description: 'A transfer to the bot awaits its answer (accept or decline).',
    source: 'pending_transfers',
    subject: 'transfer',
    example: { id: 'txn_01', amount: 5, note: 'for coffee', sender: BOB, sender_pin: BOB.pin_code, created_at: AT },
    actor: (e) => u(e.sender),
    replyTo: (e) => toPin(u(e.sender)),
  },
  sentTransfer('accepted', 'A transfer the bot sent was accepted by its recipient.', 'txn_02'),
  sentTransfer('declined', 'A transfer the bot sent was declined (the money came back).', 'txn_03'),
  {
    name: 'introduction.received',
    completeExample: true,
    description: 'Someone introduced the bot to others; the introduction awaits its answer.',
    source: 'pending_introductions',
    subject: 'introduction',
    example: {
      id: 'int_01',
      introducer: BOB,
      message: 'you two should talk',
      status: 'pending',
      created_at: AT,
      participants: [
        { ...JAR, response: 'pending' },
        { ...CAROL, response: 'pending' },
      ],
    },
    actor: (e) => u(e.introducer),
    replyTo: (e) => toPin(u(e.introducer)),
  },
  {
    name: 'introduction.completed',
    completeExample: true,
    description:
      'An introduction the bot made or is in was accepted by everyone; `conversation_id` is the new conversation.',
    source: 'introductions',
    example: {
      id: 'int_01',
      introducer: BOB,
      message: 'you two should talk',
      status: 'accepted',
      conversation_id: 'cnv_02',
      created_at: AT,
      participants: [
        { ...JAR, response: 'accepted' },
        { ...CAROL, response: 'accepted' },
      ],
    },
    actor: (e) => u(e.introducer),
    // Only participants are in the new conversation; an introducer bot has no one to reply to.
    replyTo: (e, me) =>
      participantsOf(e).some((p) => p.id === me.id) && e.conversation_id
        ? { conversation_id: String(e.conversation_id) }
        : undefined,
  },
  {
    name: 'contact_request.received',
    completeExample: true,
    description: 'Someone asked to become a contact of the bot.',
    source: 'contact_requests',
    subject: 'contact_request',
    example: { id: 'creq_01', requester: BOB, created_at: AT },
    actor: (e) => u(e.requester),
    replyTo: (e) => toPin(u(e.requester)),
  },
  {
    name: 'contact.added',
    completeExample: true,
    description: 'A new contact appeared in the contact list (either side accepted).',
    source: 'contacts',
    example: { id: 'con_01', contact: BOB, created_at: AT },
    actor: (e) => u(e.contact),
    replyTo: (e) => toPin(u(e.contact)),
  },
  {
    name: 'balance.changed',
    completeExample: true,
    description: 'The wallet balance differs from the last poll (transfers, UBI, grants); `delta` is the change.',
    source: 'balance',
    example: { balance: 12.5, previous: 7.5, delta: 5 },
  },
];
