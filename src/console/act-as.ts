import type { DomainEnv } from '../domain/env.js';
import type { User } from '../domain/users/users.js';
import { embeddedIdentity } from '../deployment/embedded-identity.js';
import type { Store } from '../store/core/types.js';

/** One request the console made as a user, with its answer (what the recorder writes). */
export interface ActedRequest {
  user: { id: string; display_name: string; pin_code: string };
  method: string;
  /** Under /api/v1, e.g. `/wallet/send`. */
  path: string;
  body?: unknown;
  status: number;
  answer: unknown;
}

/**
 * Acts as embedded users through the server's own `/api/v1`, like any client: each user gets a
 * key of its own for the console (kept like a bot's key, in `keysDir`, mode 0600), used only on
 * the server side — no key reaches the browser — and the user's rate limits apply.
 *
 * @example const a = new ActAs({ store, env, url, keysDir }); await a.request(bob, 'POST',
 * '/wallet/send', { recipient_pin, amount: 5 });
 */
export class ActAs {
  private readonly identity;

  constructor(private readonly o: { store: Store; env: DomainEnv; url: string; keysDir: string }) {
    this.identity = embeddedIdentity({ store: o.store, env: o.env, keysDir: o.keysDir });
  }

  /** Sends one request as `user`; answers the status and the parsed body (never throws on 4xx/5xx). */
  async request(user: User, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const { apiKey } = await this.identity.keyFor({
      bot: `console-${user.id.toLowerCase()}`,
      as: user.pin_code,
      createUser: false,
    });
    const res = await fetch(`${this.o.url}/api/v1${path}`, {
      method,
      headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, body: parsed };
  }
}
