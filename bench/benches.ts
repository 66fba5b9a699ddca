import type { Bench } from './harness/bench.js';
import bots from './bots.js';
import cli from './cli.js';
import dialogs from './dialogs.js';
import botsLimits from './bots-limits.js';
import botsScale from './bots-scale.js';
import jsonServer from './json-server.js';
import plugins from './plugins.js';
import poll from './poll.js';
import postgres from './postgres.js';
import takeover from './takeover.js';
import read from './read.js';
import scenarios from './scenarios.js';
import startup from './startup.js';
import writeScale from './write-scale.js';
import botsThroughput, { botsThroughputPg } from './bots-throughput.js';
import write from './write.js';

/** Every bench, in the order `npm run bench` runs them. */
export const benches: Bench[] = [
  read,
  write,
  writeScale,
  poll,
  startup,
  cli,
  jsonServer,
  bots,
  botsLimits,
  botsThroughput,
  botsThroughputPg,
  botsScale,
  scenarios,
  plugins,
  dialogs,
  postgres,
  takeover,
];
