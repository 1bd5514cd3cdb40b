/** Exit codes of `mailgate`: 0 success, 1 a message or input failed, 2 usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
