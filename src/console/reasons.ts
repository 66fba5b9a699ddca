/**
 * Why a rule did not run, in words, with what to do (the reasons traces record). Internal.
 * Kept here until the runtime's catalogue of trace reasons is on main; then read from it.
 */
const REASONS: Record<string, { meaning: string; todo?: string }> = {
  condition_false: { meaning: 'its conditions did not hold for this event', todo: 'see which condition was false (✗) and the value it saw' },
  cooldown: { meaning: 'the rule ran recently and is in its cooldown', todo: 'shorten or remove cooldown: on the rule' },
  disabled: { meaning: 'the rule is switched off (enabled: false)', todo: 'set enabled: true' },
  from_bot: { meaning: 'the event came from a bot, and the rule ignores bots', todo: 'set ignore_bots: false if bots may trigger it' },
  loop_suspected: { meaning: 'the bot seemed to be answering itself in a loop, so it was held back', todo: 'check that its replies do not trigger its own rules' },
  restarted: { meaning: 'the run was cut by a restart before it started its steps' },
  single_running: { meaning: 'another run of this rule was still going (single: true)' },
  stopping: { meaning: 'the bot was stopping' },
  throttled: { meaning: 'the rule hit its run limit (limit:)', todo: 'raise the limit, or wait for its window to pass' },
  unauthorized: { meaning: 'the sender is not allowed by the rule (from:/allow-list)', todo: 'add them to the list' },
};

/** The words for a NOT RUN reason code (the code itself when unknown). */
export function reasonWords(code: string | undefined): { code: string; meaning: string; todo?: string } {
  const c = code ?? 'unknown';
  return { code: c, ...(REASONS[c] ?? { meaning: c.replace(/_/g, ' ') }) };
}
