// The socket of the in-process request drivers (edge-micro.ts, write-micro.ts): what node's
// IncomingMessage and ServerResponse ask of their socket, without the kernel.
import { EventEmitter } from 'node:events';

/**
 * A socket as node's response uses it: writes are counted, and their callbacks either kept in
 * `callbacks` for the driver to call when it likes (`later`, edge-micro's rounds) or called on the
 * next tick, as a write a socket took at once (`next-tick`, write-micro's writes in flight).
 */
export class StandInSocket extends EventEmitter {
  writable = true;
  destroyed = false;
  readable = true;
  _httpMessage: unknown = null;
  _writableState = { corked: 0 };
  bytes = 0;
  readonly callbacks: Array<() => void> = [];
  constructor(
    readonly server: unknown,
    private readonly calls: 'later' | 'next-tick' = 'later',
  ) {
    super();
  }
  cork() {
    this._writableState.corked++;
  }
  uncork() {
    if (this._writableState.corked > 0) this._writableState.corked--;
  }
  write(data: string | Buffer, _enc?: unknown, cb?: () => void) {
    this.bytes += data.length;
    if (typeof cb === 'function') {
      if (this.calls === 'later') this.callbacks.push(cb);
      else process.nextTick(cb);
    }
    return true;
  }
  setTimeout() {
    return this;
  }
  // what IncomingMessage asks of its socket while its body is read
  resume() {
    return this;
  }
  pause() {
    return this;
  }
}

/**
 * `--alloc` of the in-process drivers: the young generation's growth per request over `n`
 * requests (`drive(n)`), after a full collection, in each of 5 rounds; a round in which a
 * scavenge ran shows as negative or tiny and is left out. Needs node `--expose-gc` and a young
 * generation that holds a round (`--min-semi-space-size=256 --max-semi-space-size=256`).
 */
export async function youngGrowth(n: number, drive: (n: number) => Promise<unknown>): Promise<number[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('--alloc needs node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256');
  const { getHeapSpaceStatistics } = await import('node:v8');
  const young = () => getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')!.space_used_size;
  const per: number[] = [];
  for (let r = 0; r < 5; r++) {
    gc();
    const at = young();
    await drive(n);
    const grown = (young() - at) / n;
    if (grown > 100) per.push(grown);
  }
  return per;
}
