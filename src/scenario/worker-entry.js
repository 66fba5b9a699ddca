// A scenario worker thread (see workers.ts): loads the TypeScript sources through tsx, as
// bin/pinbot.js does, then runs the scenarios the main thread sends.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
