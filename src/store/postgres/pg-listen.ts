import pg from 'pg';
import { channelOf } from './pg-schema.js';

export interface ListenerOptions {
  url: string;
  schema: string;
  /** A commit was announced (or the connection was just made): time to catch up. */
  onCommit: () => void;
  /** The connection failed; it is made again after `retryMs`. */
  onError: (err: Error) => void;
  retryMs?: number;
}

/**
 * The LISTEN connection of a PgStore: hears `<schema>_log` notifications (one per commit of
 * any process) on a connection of its own, and makes it again after a failure. Internal.
 */
export class Listener {
  client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly o: ListenerOptions) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.url });
    const again = () => {
      if (this.stopped || this.client !== client) return;
      this.client = undefined;
      this.timer = setTimeout(() => void this.start().catch(() => again()), this.o.retryMs ?? 1000);
      this.timer.unref();
    };
    client.on('notification', () => this.o.onCommit());
    client.on('error', (err) => {
      if (!this.stopped) this.o.onError(err);
      again();
    });
    client.on('end', again);
    this.client = client;
    await client.connect();
    await client.query(`LISTEN "${channelOf(this.o.schema)}"`);
    this.o.onCommit();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
