import type { ServerResponse } from 'node:http';

/** At most this many live pages at once (each holds a connection); the oldest is closed. */
const MAX_CLIENTS = 32;

/**
 * The live feed of the console: server-sent events telling open pages that something changed
 * (a commit, a bot's run, a job, the clock), so they fetch their live parts again. Changes in
 * one turn of the event loop go out as one event.
 *
 * @example const live = new LiveFeed(); live.attach(res); live.changed('commit');
 */
export class LiveFeed {
  private readonly clients = new Set<ServerResponse>();
  private pending = new Set<string>();
  private scheduled = false;

  /** Keeps `res` open as an event stream until the client goes or the feed closes. */
  attach(res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write('retry: 2000\n\n');
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
    if (this.clients.size > MAX_CLIENTS) {
      const oldest = this.clients.values().next().value!;
      this.clients.delete(oldest);
      oldest.end();
    }
  }

  /** Tells every open page that `topic` changed. */
  changed(topic: string): void {
    if (this.clients.size === 0) return;
    this.pending.add(topic);
    if (this.scheduled) return;
    this.scheduled = true;
    // one event per turn of the event loop, however many commits it made
    setImmediate(() => {
      this.scheduled = false;
      const data = JSON.stringify({ topics: [...this.pending] });
      this.pending = new Set();
      for (const c of this.clients) c.write(`event: change\ndata: ${data}\n\n`);
    });
  }

  /** Ends every stream (the server stops). */
  close(): void {
    for (const c of this.clients) c.end();
    this.clients.clear();
  }
}
