// Preloaded with `node --import` (NODE_OPTIONS): records the URL of every module the process
// resolves through the ESM loader to the file PINBOT_RECORD_LOADS names, one a line
// (test/telemetry/no-sdk.test.ts: with no trace exporter configured, no OpenTelemetry SDK module).
import { register } from 'node:module';

if (process.env.PINBOT_RECORD_LOADS) register('./record-loads-hooks.mjs', import.meta.url, { data: { file: process.env.PINBOT_RECORD_LOADS } });
