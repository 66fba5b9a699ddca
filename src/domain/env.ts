import type { Config } from '../config/schema.js';
import type { Clock } from '../clock/clock.js';

/** What every domain rule may depend on besides the store: the clock and the config. */
export interface DomainEnv {
  clock: Clock;
  config: Config;
}
