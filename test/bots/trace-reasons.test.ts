import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRACE_REASONS, isTraceReason, type TraceReasonInfo } from '../../src/runtime/contract/trace-reasons.js';

const DOC = new URL('../../docs/bots.md', import.meta.url);

/**
 * What the "Trace reasons" table of a bots.md text gets wrong against a catalogue: codes it
 * lacks, codes it has that the catalogue does not, and rows whose outcome or meaning differ.
 */
function docProblems(doc: string, catalogue: Record<string, TraceReasonInfo>): string[] {
  const section = doc.split(/^### Trace reasons$/m)[1]?.split(/^#/m)[0] ?? '';
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const m = /^\| `([a-z_]+)` \|(.*)\|$/.exec(line);
    if (m)
      rows.set(
        m[1]!,
        m[2]!.split(' | ').map((c) => c.trim()),
      );
  }
  const problems: string[] = [];
  for (const [code, r] of Object.entries(catalogue)) {
    const row = rows.get(code);
    if (!row) problems.push(`${code}: missing`);
    else if (row[0] !== r.outcome || row[1] !== r.meaning || row[2] !== r.todo)
      problems.push(`${code}: says ${JSON.stringify(row)}`);
  }
  for (const code of rows.keys()) if (!(code in catalogue)) problems.push(`${code}: not in the catalogue`);
  return problems;
}

describe('the catalogue of trace reasons', () => {
  it('docs/bots.md lists every code with its outcome, meaning and what to do, and no other', () => {
    expect(docProblems(readFileSync(DOC, 'utf8'), TRACE_REASONS)).toEqual([]);
  });

  it('the check can fail: a code missing, a meaning changed, a code unknown', () => {
    const doc = readFileSync(DOC, 'utf8')
      .replace(/^\| `plugin_timeout` \|.*\n/m, '')
      .replace('the rule has `enabled: false` |', 'the rule is off |')
      .replace(/^(\| `stopping` \|.*\n)/m, '$1| `made_up` | failed | x | y |\n');
    expect(docProblems(doc, TRACE_REASONS)).toEqual([
      'disabled: says ["not_run","the rule is off","remove `enabled: false` from the rule to run it"]',
      'plugin_timeout: missing',
      'made_up: not in the catalogue',
    ]);
  });

  it('knows its codes (25) and nothing else', () => {
    expect(Object.keys(TRACE_REASONS)).toHaveLength(25);
    expect(isTraceReason('cooldown')).toBe(true);
    expect(isTraceReason('toString')).toBe(false);
    expect(isTraceReason('made_up')).toBe(false);
  });
});
