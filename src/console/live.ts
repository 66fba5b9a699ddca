import type { ServerResponse } from 'node:http';
import { systemClock, type Clock } from '../clock/clock.js';

/** At most this many live pages at once (each holds a connection); the oldest is closed. */
const MAX_CLIENTS = 32;
/** A page hears of changes at most once in this many ms (what comes meanwhile goes out together). */
export const LIVE_GAP_MS = 1000;

/** One open page: what it shows (a user's page: that user) and what it has not heard yet. Internal. */
interface Client {
  res: ServerResponse;
  /** A user's page: only changes that concern this user reach it. */
  user?: string;
  /** Topics not sent yet (held back by the gap). */
  due: Set<string>;
  lastSent: number;
  cancel?: () => void;
}

/**
 * The live feed of the console: server-sent events telling open pages that something changed
 * (a commit, a bot's run, a job, the clock), so they fetch their live parts again. Changes in
 * one turn of the event loop go out as one event; a page hears only of changes that concern it
 * (a user's page: commits that touch that user), and at most once a `gapMs` (on `clock`): other
 * users' traffic never refreshes a user's page, and a flood refreshes none more than once a
 * second.
 *
 * @example const live = new LiveFeed(); live.attach(res, { user: bob.id }); live.changed('commit', new Set([bob.id]));
 */
export class LiveFeed {
  private readonly clients = new Set<Client>();
  private pending = new Set<string>();
  /** Users the pending commits touched; undefined once a commit touched users it cannot name. */
  private pendingUsers: Set<string> | undefined = new Set();
  private scheduled = false;
  /** How many change events have gone out: a page says which it was rendered after. */
  seq = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly gapMs = LIVE_GAP_MS,
  ) {}

  /** Keeps `res` open as an event stream until the client goes or the feed closes. */
  attach(res: ServerResponse, scope: { user?: string } = {}): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    // a page may have missed changes between being rendered and connecting: it compares seq
    res.write(`retry: 2000\nevent: hello\ndata: {"seq":${this.seq}}\n\n`);
    const client: Client = { res, user: scope.user, due: new Set(), lastSent: -Infinity };
    this.clients.add(client);
    res.on('close', () => {
      client.cancel?.();
      this.clients.delete(client);
    });
    if (this.clients.size > MAX_CLIENTS) {
      const oldest = this.clients.values().next().value!;
      oldest.cancel?.();
      this.clients.delete(oldest);
      oldest.res.end();
    }
  }

  /** Tells the open pages that `topic` changed; `users`: the users a commit touched (unknown: all). */
  changed(topic: string, users?: ReadonlySet<string>): void {
    this.pending.add(topic);
    if (this.pendingUsers) {
      if (users) for (const u of users) this.pendingUsers.add(u);
      else if (topic === 'commit') this.pendingUsers = undefined;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    // one event per turn of the event loop, however many commits it made
    setImmediate(() => this.flush());
  }

  /** Hands this turn's changes to the pages they concern. Internal. */
  private flush(): void {
    this.scheduled = false;
    this.seq++;
    const topics = this.pending;
    const touched = this.pendingUsers;
    this.pending = new Set();
    this.pendingUsers = new Set();
    for (const c of this.clients) {
      // a user's page shows that user's data only: a commit of others, a bot's trace, a job does not concern it
      if (c.user !== undefined && !(topics.has('commit') && (touched === undefined || touched.has(c.user)))) continue;
      for (const t of topics) c.due.add(t);
      this.sendSoon(c);
    }
  }

  /** Sends what is due to `c` now, or once its gap has passed. Internal. */
  private sendSoon(c: Client): void {
    if (c.cancel) return; // already waiting
    const at = c.lastSent + this.gapMs;
    if (this.clock.now() >= at) return this.send(c);
    c.cancel = this.clock.setTimer(at, () => {
      c.cancel = undefined;
      if (this.clients.has(c)) this.send(c);
    });
  }

  private send(c: Client): void {
    c.lastSent = this.clock.now();
    const data = JSON.stringify({ seq: this.seq, topics: [...c.due] });
    c.due.clear();
    c.res.write(`event: change\ndata: ${data}\n\n`);
  }

  /** Ends every stream (the server stops). */
  close(): void {
    for (const c of this.clients) {
      c.cancel?.();
      c.res.end();
    }
    this.clients.clear();
  }
}
