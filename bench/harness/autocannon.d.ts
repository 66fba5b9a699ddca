// The part of autocannon's API the load generator uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    total: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    /** `[<id>]` in a request becomes a fresh id in each one sent. */
    idReplacement?: boolean;
    requests?: Array<Record<string, unknown>>;
    setupClient?: (client: { setRequests(r: unknown[]): void }) => void;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
