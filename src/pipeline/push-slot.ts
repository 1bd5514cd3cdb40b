/**
 * The intake of a push adapter whose endpoints the HTTP server mounts: the adapter gets it in
 * `start()` like every other kind, and its endpoints answer a retryable refusal until then
 * (and after it stopped), so no request is acknowledged that the adapter could not store.
 */
import { GatewayError } from '../errors.js';
import type { Intake } from './types.js';

export interface IntakeSlot {
  /** The intake `start` got; throws MAILGATE_ERR_INTAKE_UNAVAILABLE (the sender retries) before start or after stop. */
  intake(): Intake;
  /** `Adapter.start` of a push adapter that only serves endpoints: keeps the intake until the signal aborts. */
  start(intake: Intake, signal: AbortSignal): Promise<void>;
}

export function intakeSlot(name: string): IntakeSlot {
  let current: Intake | undefined;
  return {
    intake() {
      if (current === undefined) throw new GatewayError('MAILGATE_ERR_INTAKE_UNAVAILABLE', `${name} is not started: retry later`);
      return current;
    },
    start(intake, signal) {
      if (signal.aborted) return Promise.resolve();
      current = intake;
      return new Promise<void>((resolve) =>
        signal.addEventListener(
          'abort',
          () => {
            current = undefined;
            resolve();
          },
          { once: true },
        ),
      );
    },
  };
}
