import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import junitModule, { type Builder } from 'junit-report-builder';
import type { Reporter } from './types.js';
import { failureText } from './types.js';

// a CommonJS module: its default export is the builder, or holds it under `default`
const junit = ((junitModule as unknown as { default?: Builder }).default ?? junitModule) as unknown as Builder;

/**
 * JUnit XML (via junit-report-builder): one `<testsuite>` per scenario (with `timestamp`, when
 * it started by the wall clock, and `hostname`), one `<testcase>` per
 * step (fragments' steps as `5.1`, `5.2`); a failed step carries its message, diff, where,
 * clock, seed and curl line; steps after it are skipped. CI systems (GitHub Actions test
 * reporters, GitLab, Jenkins) read it.
 */
export function junitReporter(file: string): Reporter {
  return {
    finish(results) {
      const host = hostname();
      const builder = junit.newBuilder().name('pinbot scenarios');
      for (const r of results) {
        const suite = builder
          .testSuite()
          .name(r.name)
          .timestamp(new Date(r.started))
          .property('file', r.file)
          .property('seed', String(r.seed))
          .property('mode', r.mode)
          .time(r.ms / 1000);
        // the builder has no setter for hostname, an attribute of <testsuite> in the JUnit schema
        (suite as unknown as { _attributes: Record<string, unknown> })._attributes.hostname = host;
        if (r.error) suite.testCase().className(r.name).name('set up').file(r.file).error(r.error);
        const add = (s: (typeof r.steps)[number]) => {
          const tc = suite
            .testCase()
            .className(r.name)
            .name(`${s.id} ${s.label}`)
            .file(r.file)
            .time(s.ms / 1000);
          if (s.status === 'skipped') tc.skipped();
          if (s.status === 'failed' && !s.children?.some((c) => c.status === 'failed'))
            tc.failure(s.error ?? 'failed', 'ScenarioStepFailure').stacktrace(failureText(r, s));
          const out = [s.detail, ...(s.logs ?? [])].filter(Boolean).join('\n');
          if (out) tc.standardOutput(out);
          s.children?.forEach(add);
        };
        r.steps.forEach(add);
      }
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, builder.build());
    },
  };
}
