import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import { lintOpenApi, type LintFinding } from './spectral.js';

interface Allowed {
  rule: string;
  path: string;
  reason: string;
}

const allowed = (
  JSON.parse(readFileSync(new URL('./lint-allow.json', import.meta.url), 'utf8')) as { allow: Allowed[] }
).allow;
const matches = (a: Allowed, f: LintFinding) => a.rule === f.rule && new RegExp(a.path).test(f.path);

describe(
  '/openapi.json passes Spectral (OAS + OWASP rulesets) but for the errors allowed with ' +
    'a reason (issue 13, item 20)',
  () => {
    it('has no error that lint-allow.json does not list, and lint-allow.json lists nothing that is gone', async () => {
      const findings = await lintOpenApi(buildOpenApi(allRoutes, configFrom({})));
      const errors = findings.filter((f) => f.severity === 0);
      expect(
        errors.filter((f) => !allowed.some((a) => matches(a, f))).map((f) => `${f.rule} at ${f.path}: ${f.message}`),
      ).toEqual([]);
      expect(
        allowed.filter((a) => !errors.some((f) => matches(a, f))).map((a) => a.rule),
        'entries of lint-allow.json that match nothing: remove them',
      ).toEqual([]);
      for (const a of allowed) expect(a.reason.length, a.rule).toBeGreaterThan(40);
    }, 60_000);

    it('would catch an error: a 429 without Retry-After', async () => {
      const doc = {
        openapi: '3.1.0',
        info: { title: 't', version: '1', description: 'd', contact: { email: 'x@example.test' } },
        servers: [{ url: 'https://example.test', description: 'production', 'x-internal': false }],
        paths: {
          '/x': {
            get: {
              operationId: 'x',
              description: 'x',
              tags: [],
              responses: {
                '429': {
                  description: 'too many',
                  headers: { RateLimit: { schema: { type: 'string', maxLength: 9 } } },
                },
              },
            },
          },
        },
      };
      const errors = (await lintOpenApi(doc)).filter((f) => f.severity === 0);
      expect(errors.map((f) => f.rule)).toContain('owasp:api4:2023-rate-limit-retry-after');
    }, 60_000);
  },
);
