// The fields a trigger's events have, read off its example (contract: TriggerDef.example).

/**
 * Every dotted path of a sample event (lists contribute their own path): the fields conditions
 * and templates may name.
 */
export function knownFields(example: Record<string, unknown>): string[] {
  const out = ['type', 'event_id'];
  const walk = (v: unknown, prefix: string) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) {
        const p = prefix ? `${prefix}.${k}` : k;
        out.push(p);
        walk(x, p);
      }
    }
  };
  walk(example, '');
  return out;
}
