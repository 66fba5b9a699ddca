/** What a memo entry holds: the tag of a body and the change counters it was built at. */
interface Entry {
  tag: string;
  version: string;
}

/**
 * The ETags last sent, by user and URL, with the change-counter version each was computed at
 * (see ChangeCounters). While the version holds, the tag holds: a matching `If-None-Match` is
 * answered 304 without building the body. Bounded: the least recently used entry goes first.
 *
 * @example
 * const tag = memo.current(user.id, req.originalUrl, counters.version(user.id));
 * if (tag && matches(tag)) return notModified();
 */
export class ValidatorMemo {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max = 10_000) {}

  /** The tag of `url` for `user` if nothing it shows has changed since, else undefined. */
  current(user: string, url: string, version: string): string | undefined {
    const key = `${user} ${url}`;
    const e = this.entries.get(key);
    if (!e || e.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.tag;
  }

  /** Notes the tag of a body built at `version`. */
  remember(user: string, url: string, version: string, tag: string): void {
    const key = `${user} ${url}`;
    this.entries.delete(key);
    this.entries.set(key, { tag, version });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}
