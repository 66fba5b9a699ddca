/** What a request that can time out and be aborted says of itself. */
export interface Cancellable {
  signal?: AbortSignal;
  timeoutMs: number;
}

/**
 * One request as the API client's transports take it: over HTTP (client/transport.ts) or handed
 * to the server's own pipeline (api/in-process.ts). Here (util/) because the API may not import
 * the client.
 */
export interface RawRequest extends Cancellable {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** What the client reads of a response. */
export interface RawResponse {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

/**
 * The settling of one request's promise, shared by the client's transports (client/transport.ts
 * over HTTP, api/in-process.ts without a socket): settled at most once, its timeout timer and
 * abort listener gone with it. A timeout or an abort calls `cancel` with the error the promise
 * is to reject with (the transport tears its request down, which settles it); so does nothing
 * else. Returns `finish(err, value?)`.
 *
 * @example const finish = settleOnce(r, resolve, reject, (err) => req.destroy(err));
 */
export function settleOnce<T>(
  r: Cancellable,
  resolve: (value: T) => void,
  reject: (err: unknown) => void,
  cancel: (err: Error) => void,
): (err: unknown, value?: T) => void {
  let done = false;
  const onAbort = () => cancel(r.signal?.reason instanceof Error ? r.signal.reason : new Error('aborted'));
  const timer = setTimeout(() => cancel(new Error(`no answer within ${r.timeoutMs} ms`)), r.timeoutMs);
  r.signal?.addEventListener('abort', onAbort, { once: true });
  return (err, value) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    r.signal?.removeEventListener('abort', onAbort);
    if (err) reject(err);
    else resolve(value as T);
  };
}
