/** Exit codes: 0 all passed, 1 a scenario failed, 2 nothing ran (a file is invalid, none found or selected). */
export const EXIT_FAILED = 1;
export const EXIT_INVALID = 2;
