import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeTransport } from '../../src/client/transport.js';

/** A server that reads requests and answers only those whose path is /answer. */
async function server(): Promise<{ url: string; server: Server; seen: string[] }> {
  const seen: string[] = [];
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-length'] ?? 'chunked'} ${body}`);
      if (req.url === '/answer') res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s, seen };
}

describe('nodeTransport (the client over HTTP)', () => {
  let s: Awaited<ReturnType<typeof server>> | undefined;
  afterEach(async () => {
    s?.server.closeAllConnections();
    await new Promise((resolve) => s?.server.close(resolve));
  });

  it('answers once, with the body sent with its Content-Length', async () => {
    s = await server();
    const res = await nodeTransport({
      url: `${s.url}/answer`,
      method: 'POST',
      headers: {},
      body: '{"a":1}',
      timeoutMs: 5_000,
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"ok":true}');
    expect(s.seen).toEqual(['POST /answer 7 {"a":1}']);
  });

  it('no answer within the timeout rejects with what happened', async () => {
    s = await server();
    await expect(nodeTransport({ url: `${s.url}/never`, method: 'GET', headers: {}, timeoutMs: 50 })).rejects.toThrow(
      'no answer within 50 ms',
    );
  });

  it('an abort rejects with its reason; an already aborted signal sends nothing', async () => {
    s = await server();
    const ac = new AbortController();
    const pending = nodeTransport({
      url: `${s.url}/never`,
      method: 'GET',
      headers: {},
      timeoutMs: 5_000,
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(new Error('stopped by the caller')), 20);
    await expect(pending).rejects.toThrow('stopped by the caller');
    const before = s.seen.length;
    const gone = new AbortController();
    gone.abort(new Error('gone before'));
    await expect(
      nodeTransport({ url: `${s.url}/answer`, method: 'GET', headers: {}, timeoutMs: 5_000, signal: gone.signal }),
    ).rejects.toThrow('gone before');
    await new Promise((r) => setTimeout(r, 20));
    expect(s.seen.length).toBe(before);
  });
});
