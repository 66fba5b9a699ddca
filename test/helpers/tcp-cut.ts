import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP relay to a real server (PostgreSQL in the outage tests) that a test can make go away:
 * `hold()` stops passing what clients send (a query in flight waits, as on a network that drops
 * packets), `cut()` ends every connection and refuses new ones at once (the server is gone),
 * `restore()` passes everything again (what was held, then the rest).
 *
 * @example const relay = await tcpRelay(5432); const url =
 * `postgres://postgres@127.0.0.1:${relay.port}/db`; relay.cut();
 */
export interface TcpRelay {
  port: number;
  /** Bytes clients sent that are held back now. */
  heldBytes(): number;
  hold(): void;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function tcpRelay(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpRelay> {
  let mode: 'pass' | 'hold' | 'cut' = 'pass';
  const pairs = new Set<{ client: Socket; upstream: Socket; held: Buffer[] }>();
  const server = createServer((client) => {
    if (mode === 'cut') return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream, held: [] as Buffer[] };
    pairs.add(pair);
    client.on('data', (d: Buffer) => (mode === 'pass' ? upstream.write(d) : pair.held.push(d)));
    upstream.on('data', (d: Buffer) => client.write(d));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    heldBytes: () => [...pairs].reduce((n, p) => n + p.held.reduce((m, b) => m + b.length, 0), 0),
    hold: () => void (mode = 'hold'),
    cut() {
      mode = 'cut';
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = 'pass';
      for (const p of pairs) for (const b of p.held.splice(0)) p.upstream.write(b);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const p of pairs) p.client.destroy();
        server.close(() => r());
      }),
  };
}
