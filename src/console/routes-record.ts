import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { iso } from '../clock/clock.js';
import { Users } from '../domain/users/users.js';
import type { ConsoleRoutes } from './console-routes.js';
import type { ConsoleState } from './console-state.js';
import { recordBody } from './pages-misc.js';
import { scenariosBody, type ScenarioRunState } from './pages-scenarios.js';
import { writeScenarioYaml } from './recorder.js';

/** A scenario file name the console saves (`NAME.yaml` in the scenarios folder). */
const FILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The recording as scenario YAML. Internal. */
const yamlOf = (st: ConsoleState) =>
  writeScenarioYaml({
    name: 'recorded in the console',
    steps: st.recording.steps,
    startIso: st.recording.startIso,
    userByPin: (p) => st.ctx.store.read.col(Users).one('pin', p),
    dir: st.scenariosDir,
  });

/**
 * Where the recording is saved as `NAME.yaml` in the scenarios folder, or why it is not (the
 * note of the refusal). Internal.
 */
function saveRecording(st: ConsoleState, given: unknown): { ok: boolean; text: string } {
  const name = String(given ?? '')
    .trim()
    .replace(/\.ya?ml$/, '');
  if (!FILE_NAME.test(name))
    return {
      ok: false,
      text:
        'file name: lower-case letters, digits, - and _ (e.g. tip-jar-recorded); it is ' +
        'saved as NAME.yaml in the scenarios folder',
    };
  if (!st.recording.steps.length) return { ok: false, text: 'nothing recorded yet' };
  const file = join(st.scenariosDir, `${name}.yaml`);
  if (existsSync(file))
    return { ok: false, text: `${relative(process.cwd(), file) || file} exists; choose another name` };
  mkdirSync(st.scenariosDir, { recursive: true });
  writeFileSync(file, yamlOf(st), { flag: 'wx' });
  const rel = relative(process.cwd(), file);
  return { ok: true, text: `saved ${rel}; replay it under Scenarios, or with: npx pinbot scenario run ${rel}` };
}

/** The Record page: recording what the operator does as a scenario, saving it in the project's scenarios folder. */
export function recordRoutes({ st, get, post, send, back }: ConsoleRoutes): void {
  get('/console/record', (req, res, s) => {
    const steps = st.recording.steps;
    const view = { recording: st.recording.on, count: steps.length, yaml: steps.length ? yamlOf(st) : '' };
    send(req, res, s, 'Record', 'record', recordBody(view, s));
  });
  get('/console/record.yaml', (_req, res) => {
    res.setHeader('Content-Disposition', 'attachment; filename="recorded.yaml"');
    res.type('text/yaml').send(yamlOf(st));
  });
  post('/console/record/start', (_req, res, s) => {
    if (!st.recording.on)
      st.recording = { on: true, steps: [], startIso: st.ctx.clock.virtual ? iso(st.ctx.clock.now()) : undefined };
    const text = 'recording: act as users (Users), move the clock (Clock), then come back here to save';
    back(res, s, '/console/record', true, text);
  });
  post('/console/record/stop', (_req, res, s) => {
    st.recording.on = false;
    back(res, s, '/console/record', true, `stopped: ${st.recording.steps.length} steps recorded`);
  });
  post('/console/record/clear', (_req, res, s) => {
    st.recording = { on: false, steps: [] };
    back(res, s, '/console/record', true, 'cleared');
  });
  post('/console/record/save', (req, res, s) => {
    const { ok, text } = saveRecording(st, (req.body as Record<string, string>).file);
    back(res, s, '/console/record', ok, text);
  });
}

/** Why a scenario file cannot run now, or undefined when it can. Internal. */
function refusalToRun(st: ConsoleState, file: string): string | undefined {
  if (!st.scenarios) return 'running scenarios needs pinbot serve';
  // only a file the project lists: a form never names an arbitrary path
  if (!st.scenarios.files().includes(file)) return `${file} is not a scenario file of this project`;
  if (st.scenarioRun && !st.scenarioRun.end) return `${st.scenarioRun.file} is still running; wait for it to end`;
  return undefined;
}

/** The Scenarios page: running a scenario file of the project, watched live. */
export function scenarioRoutes({ st, get, post, send, back }: ConsoleRoutes): void {
  get('/console/scenarios', (req, res, s) => {
    const body = scenariosBody({ files: st.scenarios?.files(), run: st.scenarioRun }, s);
    send(req, res, s, 'Scenarios', 'scenarios', body);
  });
  post('/console/scenarios/run', (req, res, s) => {
    const file = String((req.body as Record<string, string>).file ?? '');
    const refused = refusalToRun(st, file);
    if (refused) return back(res, s, '/console/scenarios', false, refused);
    const run: ScenarioRunState = { file, steps: [] };
    st.scenarioRun = run;
    void st
      .scenarios!.run(file, (step) => {
        run.steps.push(step);
        st.live.changed('scenario');
      })
      .catch((err: Error) => ({ status: 'failed' as const, error: err.message }))
      .then((end) => {
        run.end = end;
        st.live.changed('scenario');
      });
    back(res, s, '/console/scenarios', true, `running ${file}`);
  });
}
