/** Edit distance between two short strings. Internal. */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/**
 * The closest of `known` to a misspelt `word`, if it is close enough to be a likely typo.
 *
 * @example suggest('replay', ['reply', 'log']) // 'reply'
 */
export function suggest(word: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  if (best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3))) return best;
  // `poll_every` for `poll`: a known word the typo starts with (or the other way round)
  const w = word.toLowerCase();
  return [...known].find((k) => k.length >= 3 && (w.startsWith(k.toLowerCase()) || k.toLowerCase().startsWith(w)));
}

/** `did you mean "x"?` or a list of what is known, for hints. */
export function hintFor(word: string, known: string[], what: string): string {
  const s = suggest(word, known);
  if (s) return `did you mean "${s}"?`;
  const list = known.length > 12 ? `${known.slice(0, 12).join(', ')}, …` : known.join(', ');
  return `known ${what}: ${list}`;
}
