import { readFileSync } from 'node:fs';

/** One request of the recording run and its answer. */
export interface RecordedCall {
  /** What the call shows (an example's key in the document). */
  name: string;
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  body?: unknown;
  status: number;
  response: unknown;
}

/**
 * The examples of /openapi.json: real requests and answers of a server run, recorded by
 * `npm run openapi-examples` (test/openapi/record-examples.ts) into `examples.json` beside this
 * file. test/openapi/examples.test.ts fails when one no longer validates against its schema, or
 * when a fresh run answers in another shape.
 */
export interface RecordedExamples {
  note: string;
  /** By operationId. */
  operations: Record<string, RecordedCall[]>;
  /** Examples of components/schemas, by name. */
  schemas: Record<string, unknown[]>;
}

let cached: RecordedExamples | undefined;

/** The committed recording (read once). */
export function recordedExamples(): RecordedExamples {
  return (cached ??= JSON.parse(readFileSync(new URL('./examples.json', import.meta.url), 'utf8')) as RecordedExamples);
}

/** An OpenAPI `examples` map from named values. Internal. */
export function examplesMap(entries: Array<[string, unknown]>): Record<string, { summary: string; value: unknown }> {
  const out: Record<string, { summary: string; value: unknown }> = {};
  for (const [name, value] of entries) {
    const key = name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-|-$/g, '') || 'example';
    if (!(key in out)) out[key] = { summary: name, value };
  }
  return out;
}
