import { describe, expect, it } from 'vitest';
import { RouteTable } from '../../src/api/route-table.js';

// The table answers as express's router did for the same routes (non-strict, case-insensitive).
const table = new RouteTable([
  { method: 'get', path: '/me', value: 'me' },
  { method: 'get', path: '/conversations', value: 'list' },
  { method: 'post', path: '/conversations', value: 'create' },
  { method: 'get', path: '/conversations/:id', value: 'one' },
  { method: 'get', path: '/conversations/:id', value: 'shadowed' },
  { method: 'post', path: '/conversations/:id/messages', value: 'post' },
  { method: 'post', path: '/conversations/:id/leave', value: 'leave' },
  { method: 'get', path: '/contacts/check/:pin', value: 'check' },
]);

describe('RouteTable', () => {
  it.each([
    ['GET', '/me', 'me', {}],
    ['GET', '/ME', 'me', {}],
    ['GET', '/me/', 'me', {}],
    ['HEAD', '/me', 'me', {}],
    ['POST', '/conversations', 'create', {}],
    ['GET', '/conversations/cnv_1', 'one', { id: 'cnv_1' }],
    ['GET', '/Conversations/CNV_1/', 'one', { id: 'CNV_1' }],
    ['POST', '/conversations/cnv_1/messages', 'post', { id: 'cnv_1' }],
    ['POST', '/conversations/cnv_1/LEAVE', 'leave', { id: 'cnv_1' }],
    ['GET', '/contacts/check/ab%20c', 'check', { pin: 'ab c' }],
    // a param that does not percent-decode is given as sent (ids are opaque: it names nothing)
    ['GET', '/conversations/%ZZ', 'one', { id: '%ZZ' }],
  ])('%s %s → %s', (method, path, value, params) => {
    expect(table.match(method, path)).toEqual({ value, params });
  });

  it.each([
    ['GET', '/you'],
    ['GET', '/me//'],
    ['GET', '//me'],
    ['DELETE', '/me'],
    ['OPTIONS', '/me'],
    ['POST', '/me'],
    ['GET', '/conversations//messages'],
    ['GET', '/conversations/'.concat('x/y')],
    ['POST', '/conversations/cnv_1/messages/extra'],
    ['GET', ''],
    ['GET', 'me'],
  ])('%s %s → no route (404)', (method, path) => {
    expect(table.match(method, path)).toBeUndefined();
  });

  it('the first route declared for a path wins, as in express', () => {
    expect(table.match('GET', '/conversations/x')?.value).toBe('one');
  });

  it('params of one match are not shared with the next', () => {
    const a = table.match('GET', '/conversations/a')!;
    const b = table.match('GET', '/conversations/b')!;
    expect([a.params.id, b.params.id]).toEqual(['a', 'b']);
  });
});
