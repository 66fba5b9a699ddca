// Records that stay in memory while a person thinks — a waiting dialog's inbox entry and its
// record — are rebuilt from their JSON with what they have in common kept once (bench
// `dialogs`: heap per waiting dialog). Nothing here changes what is stored, only how much of
// the heap it takes.

/** Small values shared between records, by their JSON text, at most this many (least recently used go). */
const SHARED_MAX = 512;
/** Values whose JSON is longer than this are not shared (the table stays small). */
const TEXT_MAX = 256;
/** Texts shorter than this are not worth a lookup. */
const STRING_MIN = 8;

/** Frozen values that recur across records: a rule's ask arguments, a decision, a done run. */
const shared = new Map<string, object>();

/** The shared value of `text`, or `v` (then shared from now on). Internal. */
function share(text: string, v: object): object {
  const had = shared.get(text);
  if (had !== undefined) {
    shared.delete(text);
    shared.set(text, had);
    return had;
  }
  if (shared.size >= SHARED_MAX) shared.delete(shared.keys().next().value!);
  shared.set(text, v);
  return v;
}

/**
 * What records compacted in one write have in common: texts (an id, a conversation id, the
 * person) and small objects (the person), each kept once. Seed it with the ids the store's
 * maps hold (keepText), so a record's id is the very string its index holds, not a copy.
 */
export interface CompactSeed {
  readonly texts: Map<string, string>;
  readonly objects: Map<string, object>;
}

export const compactSeed = (): CompactSeed => ({ texts: new Map(), objects: new Map() });

/** Notes `text` (this very string) in `seed`: records compacted with it hold this one. */
export function keepText(seed: CompactSeed, text: string | undefined): void {
  if (text !== undefined && text.length >= STRING_MIN && !seed.texts.has(text)) seed.texts.set(text, text);
}

/**
 * Notes the texts and small objects of `v` (a frozen, compact record) in `seed`. Returns whether
 * `v` is too long to share (then so are its holders: they are not written out to know it).
 */
export function keepParts(seed: CompactSeed, v: unknown): boolean {
  if (typeof v === 'string') {
    keepText(seed, v);
    return v.length > TEXT_MAX;
  }
  if (!v || typeof v !== 'object') return false;
  let long = false;
  for (const x of Object.values(v)) if (keepParts(seed, x)) long = true;
  if (long) return true;
  const text = JSON.stringify(v);
  if (text.length > TEXT_MAX) return true;
  if (!seed.objects.has(text)) seed.objects.set(text, v);
  return false;
}

/**
 * `value` rebuilt from its JSON, deeply frozen (what the store keeps; it keeps a frozen record
 * as it is). V8 gives the objects JSON.parse makes shared hidden classes and their fields in
 * line, where objects made by spreads and clones may each get their own. A text or a small
 * object met before in `seed` is that one, and small frozen objects met in other records (the
 * same ask's arguments, decision, a done run, the bot among a conversation's participants,
 * an empty list) are shared with them: a waiting dialog keeps only what is its own.
 *
 * @example compactJson({ id: 'a', args: { question: 'Size?' } }).args === compactJson({ id: 'b', args: { question: 'Size?' } }).args // true
 */
export function compactJson<T>(value: T, seed: CompactSeed = compactSeed()): T {
  const { texts, objects } = seed;
  // objects too long to share, so that their holders are known to be without writing them out
  const long = new WeakSet<object>();
  const holdsLong = (v: object) => {
    for (const k in v) {
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'string' ? x.length > TEXT_MAX : x !== null && typeof x === 'object' && long.has(x)) return true;
    }
    return false;
  };
  return JSON.parse(JSON.stringify(value), (key: string, v: unknown) => {
    if (typeof v === 'string') {
      if (v.length < STRING_MIN) return v;
      const had = texts.get(v);
      if (had !== undefined) return had;
      texts.set(v, v);
      return v;
    }
    if (v === null || typeof v !== 'object') return v;
    Object.freeze(v); // its members are frozen already (the reviver goes bottom-up)
    if (key === '') return v; // the record itself is its own
    const text = holdsLong(v) ? undefined : JSON.stringify(v);
    if (text === undefined || text.length > TEXT_MAX) {
      long.add(v);
      return v;
    }
    const mine = objects.get(text);
    if (mine !== undefined) return mine;
    const s = share(text, v);
    objects.set(text, s);
    return s;
  }) as T;
}
