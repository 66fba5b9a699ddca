import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/api/errors.js';
import { REDACT } from '../../src/log.js';
import { testApi, type TestApi } from '../helpers/api.js';
import { Notes, testRoutes } from '../helpers/test-routes.js';
import { meRoutes } from '../../src/api/me/routes.js';

const body = (code: keyof typeof ERRORS) => ({ error: { code, message: ERRORS[code][1] } });
const JSON_TYPE = 'application/json; charset=utf-8';

describe('errors and plumbing', () => {
  let api: TestApi;
  let headers: Record<string, string>;
  let key: string;
  const logLines: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    });
    const log = pino({ level: 'trace', redact: { paths: REDACT, censor: '[redacted]' } }, sink);
    api = await testApi({ routes: [...meRoutes, ...testRoutes], log });
    ({ headers, key } = await api.user('Alice'));
  });
  afterAll(() => api.close());

  it('GET /healthz needs no key', async () => {
    const res = await api.http.get('/healthz').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /openapi.json describes the routes, with shared schemas and both auth schemes', async () => {
    const res = await api.http.get('/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.paths['/api/v1/me'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/User',
    });
    expect(res.body.paths['/api/v1/test/notes'].post.requestBody).toBeDefined();
    expect(Object.keys(res.body.components.schemas)).toEqual(expect.arrayContaining(['User', 'Error', 'Pin']));
    expect(Object.keys(res.body.components.securitySchemes)).toEqual(['apiKey', 'bearer']);
  });

  it.each([
    ['GET', '/nope'],
    ['GET', '/api/v1/nope'],
    ['POST', '/api/v1/me'],
    ['DELETE', '/api/v1/test/notes'],
    ['GET', '/api/v2/me'],
  ])('%s %s (unknown route) is 404 not_found with the catalogue body', async (method, path) => {
    const res = await api.http[method.toLowerCase() as 'get' | 'post' | 'delete'](path).set(headers).expect(404);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.body).toEqual(body('not_found'));
  });

  it('an unknown route with a malformed or huge body is still 404', async () => {
    await api.http.post('/api/v1/nope').set(headers).set('Content-Type', 'application/json').send('{oops').expect(404);
    await api.http
      .post('/api/v1/nope')
      .set(headers)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(200_000) }))
      .expect(404);
  });

  it('malformed JSON is 400 invalid_json and writes nothing', async () => {
    for (const raw of ['{"text": "hi"', '{text: "hi"}', '"just a string"', 'null', '']) {
      const res = await api.http
        .post('/api/v1/test/notes')
        .set(headers)
        .set('Content-Type', 'application/json')
        .send(raw);
      if (raw === '') {
        // An empty body is an empty object: the schema then names the missing field.
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
        continue;
      }
      expect(res.status, raw).toBe(400);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(res.body).toEqual(body('invalid_json'));
    }
    expect(api.store.read.col(Notes).count()).toBe(0);
  });

  it('a body over 100 kB is 413 payload_too_large; just under is read', async () => {
    const over = JSON.stringify({ text: 'x'.repeat(102_400) });
    const res = await api.http
      .post('/api/v1/test/notes')
      .set(headers)
      .set('Content-Type', 'application/json')
      .send(over)
      .expect(413);
    expect(res.body).toEqual(body('payload_too_large'));
    const under = JSON.stringify({ text: 'y'.repeat(102_400 - 20) });
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(102_400);
    await api.http
      .post('/api/v1/test/notes')
      .set(headers)
      .set('Content-Type', 'application/json')
      .send(under)
      .expect(201);
  });

  it('a schema violation is 400 validation_failed with one detail per bad field', async () => {
    const res = await api.http
      .post('/api/v1/test/notes')
      .set(headers)
      .send({ text: 5, colour: 'red', count: '2' })
      .expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: 'body.text', message: 'must be string' },
        { path: 'body.colour', message: 'is not a known field; remove it' },
        { path: 'body.count', message: 'must be integer' },
      ]),
    );
    const missing = await api.http.post('/api/v1/test/notes').set(headers).send({}).expect(400);
    expect(missing.body.error.details).toEqual([{ path: 'body.text', message: 'is required' }]);
  });

  it('a bug is 500 internal_error without details; the log has the request id and never the key', async () => {
    logLines.length = 0;
    const res = await api.http
      .get('/api/v1/test/boom')
      .set('Authorization', `Bearer ${key}`)
      .set('X-Request-Id', 'req-boom-1')
      .expect(500);
    expect(res.body).toEqual(body('internal_error'));
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(res.headers['x-request-id']).toBe('req-boom-1');
    const w = await api.http.post('/api/v1/test/notes').set('X-API-Key', key).send({ text: 'boom' }).expect(500);
    expect(w.body).toEqual(body('internal_error'));
    expect(api.store.read.col(Notes).ids('user', (await api.http.get('/api/v1/me').set(headers)).body.id)).toHaveLength(
      1,
    ); // only the 100 kB note
    const logs = logLines.join('');
    expect(logs).toContain('req-boom-1');
    expect(logs).toContain('secret detail of a bug'); // the operator sees the cause …
    expect(logs).not.toContain(key); // … but never a key
    expect(logs).toContain('[redacted]');
    const errorLine = logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'internal error' && l.reqId === 'req-boom-1');
    expect(errorLine?.level).toBe(50);
  });

  it('every response carries a request id; a client-supplied one is kept when sane', async () => {
    const a = await api.http.get('/healthz');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await api.http.get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(b.headers['x-request-id']).not.toBe('bad id with spaces');
  });
});
