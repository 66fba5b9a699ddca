/**
 * The first position in the ascending `arr` whose string is not below `id` (its insertion
 * point). The store's id lists, the wallet's history pages and a bot's dialogs by person use it.
 *
 * @example lowerBound(['a', 'c'], 'b') === 1
 */
export function lowerBound(arr: readonly string[], id: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
