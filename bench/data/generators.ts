import { generateMessages } from './messages.js';
import { generateUsers } from './users.js';

/** A data set generator: writes a store into `dataDir` and returns the meta the benches need. */
export type Generator = (dataDir: string, params: any) => Promise<unknown>;

/** Every data set by name. */
export const generators: Record<string, Generator> = {
  users: generateUsers,
  messages: generateMessages,
};
