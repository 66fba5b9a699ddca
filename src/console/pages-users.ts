import type { User } from '../domain/users/users.js';
import type { ConsoleSession } from './access.js';
import { html, type SafeHtml } from './html.js';
import { csrfField } from './layout.js';

interface Ref {
  display_name: string;
  pin_code: string;
}
interface Msg {
  id: string;
  content: string;
  sender: Ref;
  created_at: string;
}
interface Conv {
  id: string;
  type: string;
  name: string | null;
  participants: Ref[];
  messages: Msg[];
}
/** What a user's page shows, read through the API as that user. */
export interface UserView {
  balance?: number;
  pending: Array<{ id: string; amount: number; sender: Ref; note: string }>;
  requests: Array<{ id: string; requester: Ref }>;
  intros: Array<{ id: string; introducer: Ref; participants: Ref[]; message: string }>;
  contacts: Array<{ contact: Ref }>;
  conversations: Conv[];
  error?: string;
}

/** The users page: every user, a link to act as each, and a form to create one with a grant. */
export function usersBody(users: readonly User[], s: ConsoleSession): SafeHtml {
  return html`<h1>Users</h1>
<section data-live="users" aria-label="Users">
<ul class="users">${users.map(
    (u) => html`<li><a href="/console/users/${u.id}">Act as ${u.display_name}</a> <code>${u.pin_code}</code></li>`,
  )}</ul>
</section>
<form method="post" action="/console/users" class="card">
<h2>Create a user</h2>
${csrfField(s)}
<label>Name <input name="name" required maxlength="100"></label>
<label>Grant <input name="balance" inputmode="decimal" placeholder="0"></label>
<button type="submit">Create user</button>
</form>`;
}

const who = (r: Ref) => `${r.display_name} (${r.pin_code})`;

function answerForm(s: ConsoleSession, action: string, label: string, verb: string): SafeHtml {
  return html`<form method="post" action="${action}" class="inline">${csrfField(
    s,
  )}<button type="submit" aria-label="${verb} ${label}">${verb}</button></form>`;
}

/** A user's page: wallet and what is pending, conversations, and forms to act as them. */
export function userBody(u: User, v: UserView, s: ConsoleSession, others: readonly User[] = []): SafeHtml {
  const base = `/console/users/${u.id}`;
  return html`<h1>Acting as ${u.display_name} <code>${u.pin_code}</code></h1>
${v.error ? html`<p class="flash bad" role="alert">${v.error}</p>` : ''}
<section data-live="wallet" aria-label="Wallet">
<p>Balance: <strong data-balance>${v.balance ?? '?'}</strong></p>
${
  v.pending.length
    ? html`<h2>Pending transfers</h2><ul>${v.pending.map(
        (p) =>
          html`<li>${p.amount} from ${who(p.sender)}${p.note ? html` — “${p.note}”` : ''} ${answerForm(
            s,
            `${base}/transactions/${p.id}/accept`,
            `${p.amount} from ${p.sender.display_name}`,
            'Accept',
          )} ${answerForm(
            s,
            `${base}/transactions/${p.id}/decline`,
            `${p.amount} from ${p.sender.display_name}`,
            'Decline',
          )}</li>`,
      )}</ul>`
    : ''
}
${
  v.requests.length
    ? html`<h2>Contact requests</h2><ul>${v.requests.map(
        (r) =>
          html`<li>${who(r.requester)} ${answerForm(
            s,
            `${base}/contact-requests/${r.id}/accept`,
            `request of ${r.requester.display_name}`,
            'Accept',
          )} ${answerForm(
            s,
            `${base}/contact-requests/${r.id}/decline`,
            `request of ${r.requester.display_name}`,
            'Decline',
          )}</li>`,
      )}</ul>`
    : ''
}
${
  v.intros.length
    ? html`<h2>Introductions</h2><ul>${v.intros.map(
        (i) =>
          html`<li>${who(i.introducer)} introduces ${i.participants.map(who).join(', ')}${
            i.message ? html` — “${i.message}”` : ''
          } ${answerForm(
            s,
            `${base}/introductions/${i.id}/accept`,
            `introduction by ${i.introducer.display_name}`,
            'Accept',
          )} ${answerForm(
            s,
            `${base}/introductions/${i.id}/decline`,
            `introduction by ${i.introducer.display_name}`,
            'Decline',
          )}</li>`,
      )}</ul>`
    : ''
}
<p>Contacts: ${v.contacts.length ? v.contacts.map((c) => who(c.contact)).join(', ') : 'none'}</p>
</section>
<form method="post" action="${base}/check-balance" class="inline">${csrfField(
    s,
  )}<button type="submit">Check balance</button> <small>(a request as ${
    u.display_name
  }: recorded with its answer while recording)</small></form>
<datalist id="known-pins">${others
    .filter((o) => o.id !== u.id)
    .map((o) => html`<option value="${o.pin_code}">${o.display_name}</option>`)}</datalist>
<div class="forms">
<form method="post" action="${base}/send-message" class="card">
<h2>Send a message</h2>${csrfField(s)}
<label>To (PIN) <input name="to" required maxlength="6" autocomplete="off" list="known-pins"></label>
<label>Message <textarea name="content" required rows="2"></textarea></label>
<button type="submit">Send message</button>
</form>
<form method="post" action="${base}/send-money" class="card">
<h2>Send money</h2>${csrfField(s)}
<label>To (PIN) <input name="to" required maxlength="6" autocomplete="off" list="known-pins"></label>
<label>Amount <input name="amount" required inputmode="decimal"></label>
<label>Note <input name="note" maxlength="500"></label>
<button type="submit">Send money</button>
</form>
<form method="post" action="${base}/request-contact" class="card">
<h2>Ask to be a contact</h2>${csrfField(s)}
<label>PIN <input name="to" required maxlength="6" autocomplete="off" list="known-pins"></label>
<button type="submit">Send contact request</button>
</form>
<form method="post" action="${base}/introduce" class="card">
<h2>Introduce</h2>${csrfField(s)}
<label>PINs (comma-separated) <input name="pins" required></label>
<label>Message <input name="message" maxlength="1000"></label>
<button type="submit">Introduce</button>
</form>
</div>
<section data-live="conversations" aria-label="Conversations">
<h2>Conversations</h2>
${v.conversations.length === 0 ? html`<p>None yet.</p>` : ''}
${v.conversations.map(
  (c) => html`<article class="conversation" aria-label="Conversation ${
    c.name ??
    c.participants
      .filter((p) => p.pin_code !== u.pin_code)
      .map((p) => p.display_name)
      .join(', ')
  }">
<h3>${
    c.name ??
    c.participants
      .filter((p) => p.pin_code !== u.pin_code)
      .map(who)
      .join(', ')
  }</h3>
<ol class="messages">${c.messages.map(
    (m) =>
      html`<li class="message${m.sender.pin_code === u.pin_code ? ' mine' : ''}"><span class="from">${
        m.sender.display_name
      }</span>: <span class="content">${m.content}</span> <time>${m.created_at}</time></li>`,
  )}</ol>
<form method="post" action="${base}/conversations/${c.id}/messages" class="inline">${csrfField(
    s,
  )}<label>Reply <input name="content" required></label><button type="submit">Reply</button></form>
</article>`,
)}
</section>`;
}
