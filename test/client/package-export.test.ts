import { describe, expect, it } from 'vitest';
import { ApiRequestError, createClient, createRateBudget, type Client, type Transaction } from 'pinbot';

describe("import { createClient } from 'pinbot'", () => {
  it('exports the typed client, its errors and the rate budget', () => {
    const api: Client = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
    expect(typeof api.wallet.send).toBe('function');
    expect(api.http.base).toBe('http://127.0.0.1:1/api/v1');
    expect(typeof createRateBudget).toBe('function');
    expect(new ApiRequestError(404, undefined, 'GET', '/x').code).toBe('http_404');
    const t: Pick<Transaction, 'status'> = { status: 'pending' };
    expect(t.status).toBe('pending');
  });
});
