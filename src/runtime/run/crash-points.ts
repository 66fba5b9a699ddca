/**
 * Named points where a test can make the process die at once (SIGKILL, as `kill -9` would):
 * `PINBOT_CRASH_AT=after-action:BOT:RULE:STEP` kills it right after a step's request has been
 * answered and before the answer is written — the worst moment for exactly-once. Unset, this
 * costs one comparison. Internal.
 *
 * @example crashPoint(`after-action:${bot}:${rule}:${step}`)
 */
export function crashPoint(name: string): void {
  if (process.env.PINBOT_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}
