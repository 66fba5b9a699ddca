import type { ActionDef } from '../../contract/types.js';

const steps = { type: 'array', minItems: 1, items: { $ref: '#/definitions/step' } };

/**
 * `choose`: the first branch whose conditions hold runs its steps (if / else if / else). The
 * engine takes it itself (it compiles the branches' conditions and steps into the rule's steps,
 * so each nested step keeps its own write-ahead and Idempotency-Key); the choice is recorded
 * with the run, so a run resumed after a restart takes the same branch.
 */
export const chooseAction: ActionDef = {
  name: 'choose',
  description:
    'Runs the steps of the first branch whose conditions hold: a list of { if: ' +
    'conditions, do: [steps] }, optionally ending with { else: [steps] }.',
  schema: {
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      additionalProperties: false,
      properties: { if: { $ref: '#/definitions/conditions' }, do: steps, else: steps },
    },
  },
  example: [
    { if: { content: { matches: '^price' } }, do: [{ reply: 'It costs 5' }] },
    { else: [{ reply: 'Ask me about prices' }] },
  ],
  effect: 'local',
  templated: false,
  check(args) {
    const items = Array.isArray(args) ? (args as Array<Record<string, unknown>>) : [];
    return items.flatMap((it, i) => {
      const isElse = it && 'else' in it;
      if (isElse && ('if' in it || 'do' in it))
        return [
          { path: [i], message: 'a branch is { if, do } or { else }, not both', hint: 'split it in two branches' },
        ];
      if (isElse && i !== items.length - 1)
        return [{ path: [i], message: 'else must be the last branch', hint: 'move { else: … } to the end' }];
      if (!isElse && (!('if' in it) || !('do' in it)))
        return [
          {
            path: [i],
            message: 'a branch needs if: (conditions) and do: (steps)',
            hint: 'e.g. - { if: { content: hi }, do: [{ reply: hello }] }',
          },
        ];
      return [];
    });
  },
  run() {
    throw new Error('choose is taken by the engine');
  },
};
