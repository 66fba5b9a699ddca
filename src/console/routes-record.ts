import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Request, Response } from 'express';
import { iso } from '../clock/clock.js';
import { Users } from '../domain/users/users.js';
import type { ConsoleSession } from './access.js';
import type { ConsoleState } from './console-state.js';
import type { html } from './html.js';
import { recordBody } from './pages-misc.js';
import { scenariosBody, type ScenarioRunState } from './pages-scenarios.js';
import { writeScenarioYaml } from './recorder.js';

/** A scenario file name the console saves (`NAME.yaml` in the scenarios folder). */
const FILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A page handler of the console, with the request's session. */
export type Handler = (req: Request, res: Response, s: ConsoleSession) => Promise<void> | void;

/** What the console app gives the routes it mounts from other files. */
export interface ConsoleRoutes {
  st: ConsoleState;
  get(path: string, fn: Handler): void;
  post(path: string, fn: Handler): void;
  /** Sends a page of the layout. */
  send(
    req: Request,
    res: Response,
    s: ConsoleSession,
    title: string,
    section: string,
    body: ReturnType<typeof html>,
  ): void;
  /** Redirects with a one-time note. */
  back(res: Response, s: ConsoleSession, to: string, ok: boolean, text: string): void;
}

/**
 * The Record page (recording what the operator does as a scenario, saving it in the project's
 * scenarios folder) and the Scenarios page (running a scenario file of the project, watched live).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function recordAndScenarioRoutes({ st, get, post, send, back }: ConsoleRoutes): void {
  // recording
  const yamlOf = () =>
    writeScenarioYaml({
      name: 'recorded in the console',
      steps: st.recording.steps,
      startIso: st.recording.startIso,
      userByPin: (p) => st.ctx.store.read.col(Users).one('pin', p),
    });
  get('/console/record', (req, res, s) =>
    send(
      req,
      res,
      s,
      'Record',
      'record',
      recordBody(
        {
          recording: st.recording.on,
          count: st.recording.steps.length,
          yaml: st.recording.steps.length ? yamlOf() : '',
        },
        s,
      ),
    ),
  );
  get('/console/record.yaml', (_req, res) => {
    res.setHeader('Content-Disposition', 'attachment; filename="recorded.yaml"');
    res.type('text/yaml').send(yamlOf());
  });
  post('/console/record/start', (_req, res, s) => {
    if (!st.recording.on)
      st.recording = { on: true, steps: [], startIso: st.ctx.clock.virtual ? iso(st.ctx.clock.now()) : undefined };
    back(
      res,
      s,
      '/console/record',
      true,
      'recording: act as users (Users), move the clock (Clock), then come back here to save',
    );
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
    const name = String((req.body as Record<string, string>).file ?? '')
      .trim()
      .replace(/\.ya?ml$/, '');
    if (!FILE_NAME.test(name))
      return void back(
        res,
        s,
        '/console/record',
        false,
        'file name: lower-case letters, digits, - and _ (e.g. tip-jar-recorded); it is saved as NAME.yaml in the scenarios folder',
      );
    if (!st.recording.steps.length) return void back(res, s, '/console/record', false, 'nothing recorded yet');
    const file = join(st.scenariosDir, `${name}.yaml`);
    if (existsSync(file))
      return void back(
        res,
        s,
        '/console/record',
        false,
        `${relative(process.cwd(), file) || file} exists; choose another name`,
      );
    mkdirSync(st.scenariosDir, { recursive: true });
    writeFileSync(file, yamlOf(), { flag: 'wx' });
    back(
      res,
      s,
      '/console/record',
      true,
      `saved ${relative(process.cwd(), file)}; replay it under Scenarios, or with: npx pinbot scenario run ${relative(process.cwd(), file)}`,
    );
  });

  // scenarios: run a file of the project and watch its steps
  get('/console/scenarios', (req, res, s) =>
    send(
      req,
      res,
      s,
      'Scenarios',
      'scenarios',
      scenariosBody({ files: st.scenarios?.files(), run: st.scenarioRun }, s),
    ),
  );
  post('/console/scenarios/run', (req, res, s) => {
    const file = String((req.body as Record<string, string>).file ?? '');
    if (!st.scenarios) return void back(res, s, '/console/scenarios', false, 'running scenarios needs pinbot serve');
    // only a file the project lists: a form never names an arbitrary path
    if (!st.scenarios.files().includes(file))
      return void back(res, s, '/console/scenarios', false, `${file} is not a scenario file of this project`);
    if (st.scenarioRun && !st.scenarioRun.end)
      return void back(
        res,
        s,
        '/console/scenarios',
        false,
        `${st.scenarioRun.file} is still running; wait for it to end`,
      );
    const run: ScenarioRunState = { file, steps: [] };
    st.scenarioRun = run;
    void st.scenarios
      .run(file, (step) => {
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
