// What a request costs once express has changed its prototype: the time to set N properties on
// a node IncomingMessage made as node makes it, and on one whose prototype was then changed as
// express's app.handle does (Object.setPrototypeOf). docs/performance.md ("Read path, issue 24").
// node bin/run-ts.js bench/tools/prototype-change.ts
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

const socket = new Socket();
const changed = Object.create(IncomingMessage.prototype) as object;
class Born extends IncomingMessage {}

/** Nanoseconds per call of `fn`, after a warm-up. */
function timeNs(fn: () => unknown, n = 100_000): number {
  for (let i = 0; i < 10_000; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / n;
}

const set = (req: IncomingMessage, props: number) => {
  const r = req as unknown as Record<string, unknown>;
  for (let j = 0; j < props; j++) r[`p${j}`] = j;
  return req;
};

console.log('properties set | made by node | prototype changed (express) | made by a subclass (pinbot)');
for (const props of [0, 1, 3, 6]) {
  const plain = timeNs(() => set(new IncomingMessage(socket), props));
  const swapped = timeNs(() => {
    const r = new IncomingMessage(socket);
    Object.setPrototypeOf(r, changed);
    return set(r, props);
  });
  const born = timeNs(() => set(new Born(socket), props));
  console.log(
    `${String(props).padStart(14)} | ${plain.toFixed(0).padStart(9)} ns | ` +
      `${swapped.toFixed(0).padStart(24)} ns | ${born.toFixed(0).padStart(24)} ns`,
  );
}
