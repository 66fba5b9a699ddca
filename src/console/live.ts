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
  /** How many change events have gone out: a page says which it was rendered after. */
  seq = 0;

  /** Keeps `res` open as an event stream until the client goes or the feed closes. */
  attach(res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    // a page may have missed changes between being rendered and connecting: it compares seq
    res.write(`retry: 2000\nevent: hello\ndata: {"seq":${this.seq}}\n\n`);
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
    this.pending.add(topic);
    if (this.scheduled) return;
    this.scheduled = true;
    // one event per turn of the event loop, however many commits it made
    setImmediate(() => {
      this.scheduled = false;
      this.seq++;
      const data = JSON.stringify({ seq: this.seq, topics: [...this.pending] });
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
