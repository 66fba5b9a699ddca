import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../helpers/api.js';

describe('GET /api/v1/me', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await testApi();
  });
  afterAll(() => api.close());

  it('answers the profile', async () => {
    const alice = await api.user('Alice');
    const res = await api.http.get('/api/v1/me').set(alice.headers).expect(200);
    expect(res.body).toEqual({ id: alice.user.id, display_name: 'Alice', pin_code: alice.user.pin_code });
    expect(res.body.pin_code).toMatch(/^[A-Z0-9]{6}$/);
  });
});
