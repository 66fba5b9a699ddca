import type { Actor } from './harness-app.js';

/** Ids as the API makes them: a type prefix, `_`, lower-case base32. */
export const ID_SHAPE = /^([a-z]+)_[0-9a-z]{8,}$/;

/**
 * What the harness has learned while talking to the API: the actors, the ids each group has
 * seen in responses (so valid requests can name real resources), the text markers each group
 * wrote (so a response to another group that contains one is a leak), and which id prefixes
 * each operation accepts (learned from answers other than 404, so new routes need no table).
 *
 * @example
 * const world = new World([alice, bob]);
 * world.harvest(alice.group, responseJson);
 */
export class World {
  /** Ids seen by each group, in the order first seen. */
  readonly ids = new Map<number, string[]>();
  /** The group that first saw each id. */
  readonly idGroup = new Map<string, number>();
  /** Text markers written by each group. */
  readonly markers = new Map<string, number>();
  /** Id prefixes that an operation answered with something other than 404. */
  readonly fits = new Map<string, Set<string>>();
  private markerSeq = 0;

  constructor(readonly actors: Actor[]) {
    for (const a of actors) this.note(a.group, a.id);
  }

  members(group: number): Actor[] {
    return this.actors.filter((a) => a.group === group);
  }

  /** Records every id-shaped value under an `id`/`*_id` key of `body` as seen by `group`. */
  harvest(group: number, body: unknown): void {
    const walk = (v: unknown, key: string | undefined): void => {
      if (typeof v === 'string') {
        if (key !== undefined && (key === 'id' || key.endsWith('_id')) && ID_SHAPE.test(v)) this.note(group, v);
      } else if (Array.isArray(v)) for (const x of v) walk(x, key);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    };
    walk(body, undefined);
  }

  private note(group: number, id: string): void {
    if (this.idGroup.has(id)) return;
    this.idGroup.set(id, group);
    let list = this.ids.get(group);
    if (!list) this.ids.set(group, (list = []));
    list.push(id);
  }

  /** A fresh marker string for text written by `group`. */
  marker(group: number): string {
    const m = `mkq${group}x${this.markerSeq++}q`;
    this.markers.set(m, group);
    return m;
  }

  /** Remembers that `opId` gave a real answer for an id with this prefix. */
  learn(opId: string, id: string): void {
    const prefix = ID_SHAPE.exec(id)?.[1];
    if (!prefix) return;
    let set = this.fits.get(opId);
    if (!set) this.fits.set(opId, (set = new Set()));
    set.add(prefix);
  }

  /**
   * The `n`-th id for `opId` seen by `group`: mostly ids whose prefix the operation is known to
   * take, sometimes any (so new prefixes get learned).
   */
  idFor(opId: string, group: number, n: number): string | undefined {
    const all = this.ids.get(group) ?? [];
    if (!all.length) return undefined;
    const prefixOf = (id: string) => ID_SHAPE.exec(id)?.[1] ?? '';
    const fit = this.fits.get(opId);
    // Until the operation has shown which prefixes it takes (and now and then after), pick a
    // prefix first, so rare kinds of ids get tried as often as common ones.
    const prefixes = [...new Set(all.map(prefixOf))];
    const known = fit && n % 5 !== 0 ? prefixes.filter((p) => fit.has(p)) : [];
    const choices = known.length ? known : prefixes;
    const prefix = choices[n % choices.length]!;
    const pool = all.filter((id) => prefixOf(id) === prefix);
    // Prefer recent ids: resources still pending are more interesting than old ones.
    const recent = (n >>> 3) % 3 === 0 ? pool : pool.slice(-20);
    return recent[(n >>> 5) % recent.length];
  }

  /**
   * Ids and markers of other groups that occur in `text` (a response to `group`), except
   * `allowed` (e.g. the user a path PIN names on purpose).
   */
  foreignIn(group: number, text: string, allowed: ReadonlySet<string> = new Set()): string[] {
    const found: string[] = [];
    for (const m of text.matchAll(/[a-z]+_[0-9a-z]{8,}|mkq\d+x\d+q/g)) {
      const s = m[0];
      if (allowed.has(s)) continue;
      const owner = this.idGroup.get(s) ?? this.markers.get(s);
      if (owner !== undefined && owner !== group) found.push(s);
    }
    return found;
  }
}
