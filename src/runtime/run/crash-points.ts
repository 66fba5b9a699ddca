/** PINBOT_CRASH_AT, read once: process.env is a lookup in the environment on every access. */
const CRASH_AT = process.env.PINBOT_CRASH_AT;

/**
 * Named points where a test can make the process die at once (SIGKILL, as `kill -9` would):
 * `PINBOT_CRASH_AT=after-action:BOT:RULE:STEP` kills it right after a step's request has been
 * answered and before the answer is written — the worst moment for exactly-once;
 * `before-action:BOT:RULE:STEP` once the step's write-ahead is committed, before its request;
 * `after-run:BOT:RULE` once a run's last write is committed (on an ordered store neither need
 * be durable yet) — or, for the removal of its entry, held for the bot's next write (not even
 * committed: BotState.endLater). Read at start; unset, this costs one comparison. Internal.
 *
 * @example crashPoint('after-action', bot, rule, step) // or crashPoint(`after-action:${bot}:${rule}:${step}`)
 */
export function crashPoint(name: string, ...parts: Array<string | number>): void {
  if (CRASH_AT !== undefined && CRASH_AT === (parts.length ? `${name}:${parts.join(':')}` : name))
    process.kill(process.pid, 'SIGKILL');
}
