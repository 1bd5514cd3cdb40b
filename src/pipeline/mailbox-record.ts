/**
 * A pull mailbox's state in the store, beside its checkpoints (`<kind>:<name>/<user>`), so that
 * `mailgate status` shows a mailbox error without asking the running service: written whenever
 * the error changes (a first healthy round writes nothing). Best effort: a failing store is the
 * next change's problem.
 */
import type { Intake } from './types.js';

export interface MailboxError {
  code: string;
  message: string;
  at: string;
}

export class MailboxRecord {
  /** The error code last written ('' for healthy); undefined until something is written. */
  private written: string | undefined;

  constructor(private readonly key: string) {}

  async keep(intake: Intake, error: MailboxError | undefined, nextAttemptAt: string | undefined): Promise<void> {
    const code = error?.code ?? '';
    if (code === this.written || (this.written === undefined && code === '')) return;
    const value = error ? { state: 'backoff', error, nextAttemptAt } : { state: 'ok', since: new Date().toISOString() };
    try {
      await intake.accept([], { checkpoint: { key: this.key, value } });
      this.written = code;
    } catch {
      // written at the next change
    }
  }
}
