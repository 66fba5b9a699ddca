/** Written in a request's header or body, it is a fresh id in every request sent (load-child.ts). */
export const UNIQUE_ID = '[<id>]';

/** One kind of request a connection sends over and over. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  /** Path and query, e.g. `/api/v1/me`. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What the load generator child runs: `connections` connections against `url` for
 * `durationS` seconds, connection i sending `requests[i % requests.length]`.
 */
export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  requests: LoadRequest[];
  /** Seconds before a request counts as timed out (autocannon's default is 10). */
  timeoutS?: number;
}

/** What one load run measured. Latencies in ms. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Server CPU time (user + system, all threads) per completed request, in µs, when known. */
  cpuUsPerReq?: number;
}
