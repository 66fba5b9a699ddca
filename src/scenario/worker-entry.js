// A scenario worker process run from the sources (see workers.ts): loads them through tsx, as
// bin/pinbot.js does, then runs the scenarios the main process sends.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
