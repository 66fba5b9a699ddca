const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses a duration like `90s`, `15m`, `2h`, `3d` (or a sum such as `1h30m`) into milliseconds.
 * Returns `undefined` for anything else, so callers can report the field.
 *
 * @example parseDuration('1h30m') // 5_400_000
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = String(text).trim();
  if (!/^(\d+(ms|s|m|h|d|w))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const m of trimmed.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * UNITS[m[2]!]!;
  return total;
}

/** A duration schema fragment for JSON Schemas (config, bots, scenarios). */
export const DURATION_PATTERN = '^(\\d+(ms|s|m|h|d|w))+$';
