import type { SourceContext } from '../../contract/types.js';

/**
 * The client options of a built-in source's request: the poll's abort signal, and what kind of
 * request it is (a woken poll or a scheduled one: the rate budget paces them apart). Internal.
 *
 * @example await ctx.api.wallet.pending(requestOptions(ctx))
 */
export const requestOptions = (ctx: SourceContext) => ({
  signal: ctx.signal,
  kind: ctx.requestKind ?? ('poll' as const),
});
