import type { StepKind } from '../types.js';

/**
 * `use: fragments/pay.yaml` with `with: { from: alice, amount: 5 }` runs a fragment's steps.
 * A fragment is a steps file with declared `params` (each required unless it has a default);
 * its steps see the parameters as variables, and its captures are seen by later steps.
 */
export const useStep: StepKind<{ use: string; with?: Record<string, unknown> }> = {
  name: 'use',
  // it acts when its fragment has a step that acts (the runner looks)
  acts: false,
  description: 'runs the steps of a fragment file (relative to this file) with parameters (`with:`)',
  schema: {
    properties: {
      use: { type: 'string', minLength: 1, description: 'a fragment file, relative to this file' },
      with: { type: 'object', description: "the fragment's parameters: name → value (templates allowed)" },
    },
    required: ['use'],
  },
  label: (s) => `use ${s.use}`,
  check(s, c) {
    c.templates(s.with ?? {}, ['with']);
    c.fragment(s.use, s.with ?? {}, ['use']);
  },
  async run(s, ctx) {
    const given = ctx.render<Record<string, unknown>>(s.with ?? {});
    const vars: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(ctx.node.params ?? {})) vars[name] = name in given ? given[name] : p.default;
    await ctx.runChildren(ctx.node.children ?? [], vars);
  },
};
