import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';

/** One finding of the linter. */
export interface LintFinding {
  rule: string;
  /** JSON path in the document, dotted (`paths./api/v1/me.get.responses.200`). */
  path: string;
  message: string;
  /** 0 error, 1 warning, 2 info, 3 hint. */
  severity: number;
}

// The packages are CommonJS; their named exports come through the default export.
const { Spectral, Document } = spectralCore as unknown as typeof import('@stoplight/spectral-core');
const { Json } = spectralParsers as unknown as typeof import('@stoplight/spectral-parsers');
const { oas } = spectralRulesets as unknown as typeof import('@stoplight/spectral-rulesets');
const owasp = ((owaspRuleset as { default?: unknown }).default ?? owaspRuleset) as never;

/**
 * Lints an OpenAPI document with Spectral's OAS ruleset and the OWASP API Security ruleset
 * (both at their recommended level), offline: the document has only local references.
 *
 * @example
 * const errors = (await lintOpenApi(doc)).filter((f) => f.severity === 0);
 */
export async function lintOpenApi(doc: unknown): Promise<LintFinding[]> {
  const spectral = new Spectral();
  spectral.setRuleset({
    extends: [
      [oas as never, 'recommended'],
      [owasp, 'recommended'],
    ],
  } as never);
  const results = await spectral.run(new Document(JSON.stringify(doc, null, 2), Json, 'openapi.json'));
  return results.map((r) => ({
    rule: String(r.code),
    path: r.path.join('.'),
    message: r.message,
    severity: r.severity,
  }));
}
