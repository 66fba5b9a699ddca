import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedApi } from '../helpers/logged-api.js';

describe('request ids and request log lines', () => {
  let lines: string[] = [];
  let http: ReturnType<typeof supertest>;
  let key: string;
  let close = () => undefined as void;

  beforeAll(async () => {
    ({ http, key, lines, close } = await loggedApi('info'));
  });
  afterAll(() => close());

  const lineFor = async (id: string) => {
    await new Promise((r) => setTimeout(r, 20));
    return lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.req?.id === id);
  };

  it('echoes a well-formed X-Request-Id and makes one up otherwise', async () => {
    const given = await http.get('/healthz').set('X-Request-Id', 'abc-123.x').expect(200);
    expect(given.headers['x-request-id']).toBe('abc-123.x');
    const bad = await http.get('/healthz').set('X-Request-Id', 'has spaces').expect(200);
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await http.get('/healthz').expect(200);
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(none.headers['x-request-id']).not.toBe(bad.headers['x-request-id']);
  });

  it('logs a 4xx at info with id, method, url and status, never the key', async () => {
    await http.get('/api/v1/nope').set('X-Request-Id', 'r-404').set('X-API-Key', key).expect(404);
    const line = await lineFor('r-404');
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'r-404', method: 'GET', url: '/api/v1/nope' },
      res: { statusCode: 404 },
    });
    expect(typeof line!.responseTime).toBe('number');
    expect(line!.user_id).toMatch(/^usr_/);
    expect(line!.req.headers['x-api-key']).toBe('[redacted]');
    expect(JSON.stringify(lines)).not.toContain(key);
  });

  it('writes no line for a 2xx below the level (debug)', async () => {
    await http.get('/api/v1/me').set('X-Request-Id', 'r-200').set('X-API-Key', key).expect(200);
    expect(await lineFor('r-200')).toBeUndefined();
  });
});
