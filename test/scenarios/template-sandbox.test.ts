import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evalCondition, render, renderString } from '../../src/scenario/templates.js';
import { tempDir } from '../helpers/api.js';

/**
 * Scenarios are shared between people: their templates are sandboxed as bot templates are. A
 * scenario that includes `config.yaml` (or any file of the folder it runs in) reads nothing.
 */
const tmp = tempDir('pinbot-scenario-sandbox-');
const cwd = process.cwd();
afterAll(() => {
  process.chdir(cwd);
  tmp.cleanup();
});

describe('scenario templates read no file', () => {
  writeFileSync(join(tmp.dir, 'secret.txt'), 'SECRET=do-not-show');

  it.each([
    "{% include 'secret.txt' %}",
    "{% render 'secret.txt' %}",
    "{% layout 'secret.txt' %}x{% endlayout %}",
    "before {% include 'secret.txt' %} after",
  ])('%s is refused, the file is never read', (text) => {
    process.chdir(tmp.dir);
    try {
      expect(() => renderString(text, {})).toThrow(/not available: scenario templates cannot read files/);
      expect(() => render({ deep: [text] }, {})).toThrow(/scenario templates cannot read files/);
    } finally {
      process.chdir(cwd);
    }
  });

  it('the rest of the language still works (filters, strict variables, conditions)', () => {
    expect(renderString('{{ tip | times: 2 }}', { tip: 5 })).toBe(10);
    expect(renderString('tip {{ tip }}', { tip: 5 })).toBe('tip 5');
    expect(() => renderString('{{ nobody }}', {})).toThrow(/undefined variable/);
    expect(evalCondition('tip > 4', { tip: 5 })).toBe(true);
  });

  it('no prototype tricks: only own properties are read', () => {
    expect(() => renderString('{{ x.constructor }}', { x: {} })).toThrow(/undefined variable: x.constructor/);
  });
});
