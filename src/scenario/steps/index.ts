import { StepRegistry } from '../step-registry.js';
import { clockStep } from './clock.js';
import { expectEventStep, expectNoneStep } from './expect-event.js';
import { assertStep, logStep, restartStep, setStep } from './misc.js';
import { requestStep } from './request.js';
import { sayStep } from './say.js';
import { useStep } from './use.js';

/** The built-in step kinds, registered in the order the docs list them. */
export function builtinSteps(): StepRegistry {
  return new StepRegistry()
    .add(requestStep)
    .add(sayStep)
    .add(expectEventStep)
    .add(expectNoneStep)
    .add(clockStep)
    .add(useStep)
    .add(setStep)
    .add(assertStep)
    .add(logStep)
    .add(restartStep)
    .freeze();
}
