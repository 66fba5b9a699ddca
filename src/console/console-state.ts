import type { ServerContext } from '../services/types.js';
import type { ConsoleAccess } from './access.js';
import type { ActAs } from './act-as.js';
import type { LiveFeed } from './live.js';
import type { MetricHistory } from './metric-history.js';
import type { JobRun } from './pages-misc.js';
import type { ScenarioRunState } from './pages-scenarios.js';
import type { RecordedStep } from './recorder.js';
import type { ScenarioPort } from './scenario-port.js';

/** What the console's pages use: the server, its access, feed, acting and recording. */
export interface ConsoleState {
  ctx: ServerContext;
  access: ConsoleAccess;
  live: LiveFeed;
  act: ActAs;
  jobs: JobRun[];
  recording: { on: boolean; steps: RecordedStep[]; startIso?: string };
  /** Where recorded scenarios are saved. */
  scenariosDir: string;
  /** Runs the project's scenarios (absent: not offered). */
  scenarios?: ScenarioPort;
  /** The scenario run shown (one at a time). */
  scenarioRun?: ScenarioRunState;
  /** The counters' history for the charts (metrics: docs/operations.md "Monitoring"). */
  history: MetricHistory;
  /** Only requests naming a loopback host are served (the server listens on loopback): no DNS rebinding. */
  loopbackOnly?: boolean;
}
