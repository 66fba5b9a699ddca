import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scenarioSchemaLine, schemaRef } from '../../src/util/project-files.js';

describe('the $schema line of a file pinbot writes in a project', () => {
  let dir: string;
  let before: string;
  beforeEach(() => {
    before = process.cwd();
    dir = mkdtempSync(join(tmpdir(), 'pinbot-schema-ref-'));
    process.chdir(dir);
  });
  afterEach(() => {
    process.chdir(before);
    rmSync(dir, { recursive: true, force: true });
  });

  it('points at the installed package in a project made by pinbot init (no schemas/ of its own)', () => {
    mkdirSync('node_modules/pinbot/schemas', { recursive: true });
    writeFileSync('node_modules/pinbot/schemas/scenario.schema.json', '{}');
    expect(schemaRef('scenario.schema.json', 'scenarios')).toBe('../node_modules/pinbot/schemas/scenario.schema.json');
    expect(scenarioSchemaLine(join(dir, 'scenarios'))).toBe(
      '# yaml-language-server: $schema=../node_modules/pinbot/schemas/scenario.schema.json\n',
    );
  });

  it("prefers the project's own schemas/ (written by pinbot schemas, with its plugins)", () => {
    mkdirSync('node_modules/pinbot/schemas', { recursive: true });
    writeFileSync('node_modules/pinbot/schemas/scenario.schema.json', '{}');
    mkdirSync('schemas');
    writeFileSync('schemas/scenario.schema.json', '{}');
    expect(schemaRef('scenario.schema.json', 'scenarios/nested')).toBe('../../schemas/scenario.schema.json');
  });
});
