/**
 * Named points where a test can make the process die at once (SIGKILL, as `kill -9` would):
 * `PINBOT_CRASH_AT=after-action:BOT:RULE:STEP` kills it right after a step's request has been
 * answered and before the answer is written — the worst moment for exactly-once;
 * `before-action:BOT:RULE:STEP` once the step's write-ahead is committed, before its request;
 * `after-run:BOT:RULE` once a run's last write is committed (on an ordered store neither need
 * be durable yet). Unset, this costs one comparison. Internal.
 *
 * @example crashPoint(`after-action:${bot}:${rule}:${step}`)
 */
export function crashPoint(name: string): void {
  if (process.env.PINBOT_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}
