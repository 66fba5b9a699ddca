import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load.js';
import { projectRoot } from '../../src/scenario/project-root.js';
import { builtinSteps } from '../../src/scenario/steps/index.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { tempDir } from '../helpers/api.js';

// Issue 21 item 11: `use:` read fragments anywhere on disk (relative or absolute), and scenarios
// from untrusted pull requests are run in CI. Files a scenario names stay inside its project.

const tmp = tempDir('pinbot-outside-');
afterAll(() => tmp.cleanup());
const project = join(tmp.dir, 'project');
mkdirSync(join(project, 'scenarios', 'fragments'), { recursive: true });
writeFileSync(join(project, 'package.json'), '{"name":"victim"}\n');
const frag = 'params: [who]\nsteps:\n  - as: "{{ who }}"\n    request: GET /me\n';
writeFileSync(join(project, 'scenarios', 'fragments', 'me.yaml'), frag);
// outside the project: a secret that happens to be a valid fragment, a bot, and a plugin that
// leaves a mark when imported
writeFileSync(join(tmp.dir, 'secret.yaml'), `# the secret is 12345\n${frag}`);
writeFileSync(
  join(tmp.dir, 'bot.yaml'),
  'name: b\nas: alice\nrules:\n  - on: message.received\n    do: [{ reply: hi }]\n',
);
const mark = join(tmp.dir, 'imported');
writeFileSync(
  join(tmp.dir, 'evil.js'),
  `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(mark)}, ` +
    `'ran');\nexport default { name: 'evil', version: '1.0.0', pinbot: '*', setup() {} ` +
    `};\n`,
);
symlinkSync(join(tmp.dir, 'secret.yaml'), join(project, 'scenarios', 'fragments', 'link.yaml'));

const steps = builtinSteps();
const scenario = (name: string, body: string) => {
  const file = join(project, 'scenarios', `${name}.yaml`);
  writeFileSync(file, `name: ${name}\nusers: { alice: {} }\n${body}`);
  return file;
};
const problems = async (file: string, allowOutsideRoot = false) =>
  (await loadScenario(file, { steps, allowOutsideRoot })).problems.map(formatProblem);
const HINT =
  'scenarios read files only inside their project (the folder of config.yaml or ' +
  'package.json above them): move the file into it, or run with --allow-outside-root ' +
  'if you trust this scenario';

describe('scenario files read nothing outside their project root', () => {
  it('the root is the folder of package.json or config.yaml above the scenario', () => {
    expect(projectRoot(join(project, 'scenarios', 'a.yaml'))).toBe(project);
  });

  it('use: with ../ out of the project is refused at file:line:col', async () => {
    const file = scenario('rel', 'steps:\n  - use: ../../secret.yaml\n    with: { who: alice }\n');
    expect(await problems(file)).toEqual([
      `${file}:4:10: steps.0.use: the fragment ${join(tmp.dir, 'secret.yaml')} is ` +
        `not read: it is outside the project root ${project} — ${HINT}`,
    ]);
  });

  it('an absolute use: is refused without reading it', async () => {
    const file = scenario('abs', 'steps:\n  - use: /etc/passwd\n');
    const got = await problems(file);
    expect(got).toEqual([
      `${file}:4:10: steps.0.use: the fragment /etc/passwd is not read: it is ` +
        `outside the project root ${project} — ${HINT}`,
    ]);
    expect(got.join('\n')).not.toContain('root:');
  });

  it('a symbolic link inside the project that leads out of it is refused', async () => {
    const file = scenario('link', 'steps:\n  - use: fragments/link.yaml\n    with: { who: alice }\n');
    expect((await problems(file))[0]).toContain(
      `steps.0.use: the fragment ` +
        `${join(project, 'scenarios', 'fragments', 'link.yaml')} is not read: it leads ` +
        `outside the project root ${project} (to ${join(tmp.dir, 'secret.yaml')}, ` +
        `through a symbolic link)`,
    );
  });

  it('a bots: file out of the project is refused too', async () => {
    const file = scenario('bots', 'bots: [../../bot.yaml]\nsteps:\n  - as: alice\n    request: GET /me\n');
    expect(await problems(file)).toEqual([
      `${file}:3:8: bots.0: bot file ../../bot.yaml is not read: it is outside the project root ${project} — ${HINT}`,
    ]);
  });

  it(
    'a fragment inside the project whose own use: leads out is refused at the ' +
      'fragment’s line; a scenario’s config cannot lift the bot rules (review)',
    async () => {
      writeFileSync(
        join(project, 'scenarios', 'fragments', 'hop.yaml'),
        'steps:\n  - use: ../../../secret.yaml\n    with: { who: alice }\n',
      );
      const hop = scenario('hop', 'steps:\n  - use: fragments/hop.yaml\n');
      expect((await problems(hop)).join('\n')).toContain(
        `hop.yaml:2:10: steps.0.use: the fragment ${join(tmp.dir, 'secret.yaml')} is ` +
          `not read: it is outside the project root ${project}`,
      );
      // config: of a scenario reaches its embedded server, not the checks of its bots
      const cfg = scenario(
        'cfg',
        'config:\n  bots: { env_allow: [HOME], allowed_servers: ["http://author.example"] }\nbots:\n  - { name: x, as: alice, server: "http://author.example", rules: [] }\n  - { name: y, as: alice, key: "${env:HOME}", rules: [] }\nsteps:\n  - clock: { advance: 1s }\n',
      );
      const got = (await problems(cfg)).join('\n');
      expect(got).toContain('bots.1.key: ${env:HOME} is not allowed in key');
      expect(got).toContain('http://author.example is not a server the operator allows');
    },
  );

  it('a plugins: file out of the project is refused and never imported', async () => {
    const file = scenario('plugins', 'plugins: [../../evil.js]\nsteps:\n  - as: alice\n    request: GET /me\n');
    expect(await problems(file)).toEqual([
      `${file}:3:11: plugins.0: plugin file ../../evil.js is not read: it is outside ` +
        `the project root ${project} — ${HINT}`,
    ]);
    expect(existsSync(mark)).toBe(false);
  });

  it('inside the project, use: works as before; --allow-outside-root lets a trusted scenario out', async () => {
    expect(
      await problems(scenario('inside', 'steps:\n  - use: fragments/me.yaml\n    with: { who: alice }\n')),
    ).toEqual([]);
    expect(await problems(join(project, 'scenarios', 'rel.yaml'), true)).toEqual([]);
  });

  it('`pinbot scenario validate` refuses with exit 2, and accepts with --allow-outside-root', () => {
    const file = join(project, 'scenarios', 'rel.yaml');
    const run = (...extra: string[]) =>
      spawnSync(process.execPath, ['bin/pinbot.js', 'scenario', 'validate', ...extra, file], { encoding: 'utf8' });
    const refused = run();
    expect(refused.status).toBe(2);
    // the CLI names files as given relative to the working directory (run-all.ts)
    expect(refused.stderr).toContain(
      `${relative(process.cwd(), file)}:4:10: steps.0.use: the fragment ` +
        `${join(tmp.dir, 'secret.yaml')} is not read: it is outside the project root`,
    );
    const allowed = run('--allow-outside-root');
    expect(allowed.stderr).toBe('');
    expect(allowed.status).toBe(0);
  }, 90_000);
});

describe('a scenario file that is itself a link out of the project (round 4)', () => {
  // a valid scenario outside the project, holding a secret in what a report would print
  const outsider = join(tmp.dir, 'outsider.yaml');
  writeFileSync(
    outsider,
    'name: the secret is 12345\nusers: { alice: {} }\nsteps:\n  - as: alice\n    request: GET /me\n',
  );
  const link = join(project, 'scenarios', 'linked.yaml');
  symlinkSync(outsider, link);

  it('is refused at file:1:1 without being read or run; --allow-outside-root reads it', async () => {
    const got = await loadScenario(link, { steps });
    expect(got.scenario).toBeUndefined();
    expect(got.problems.map(formatProblem)).toEqual([
      `${link}:1:1: the scenario file is not read: it leads outside the project root ` +
        `${project} (to ${outsider}, through a symbolic link) — ${HINT}`,
    ]);
    expect((await loadScenario(link, { steps, allowOutsideRoot: true })).scenario?.name).toBe('the secret is 12345');
  });

  it('`pinbot scenario run` exits 2 and neither runs nor reports it', () => {
    const r = spawnSync(process.execPath, ['bin/pinbot.js', 'scenario', 'run', relative(process.cwd(), link)], {
      encoding: 'utf8',
      env: { ...process.env, PINBOT_FROM_SOURCE: '1' },
    });
    expect(r.status).toBe(2);
    expect(r.stdout + r.stderr).not.toContain('12345');
    expect(r.stdout + r.stderr).toContain('the scenario file is not read');
  });
});
