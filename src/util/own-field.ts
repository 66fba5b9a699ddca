/**
 * Sets field `key` of an object being built as a copy: a `__proto__` key (JSON.parse makes it an
 * own field; outside data may hold one) stays an own, enumerable field, as a spread copy or
 * `structuredClone` keeps it — assigned, it would set the copy's prototype instead.
 *
 * @example for (const k of Object.keys(src)) setOwnField(out, k, src[k]);
 */
export function setOwnField(into: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}
