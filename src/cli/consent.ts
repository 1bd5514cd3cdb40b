/**
 * Consent before billing (and before deleting): a command that spends AI units or drops dead
 * letters asks first on a terminal; `--yes` answers for the operator; off a terminal (a script,
 * CI, a pipe) nothing can be asked, so the command refuses without `--yes` before doing anything.
 */
import { createInterface } from 'node:readline/promises';
import { GatewayError } from '../errors.js';
import type { CliIO } from './types.js';

/** Whether the operator can be asked: both the keyboard and the screen are a terminal. */
export function canAsk(io: CliIO): boolean {
  return io.stdin?.isTTY === true && io.stderr.isTTY === true;
}

/** Throws MAILGATE_ERR_CLI_CONSENT_REQUIRED when a question would be needed and cannot be asked. */
export function requireConsentPossible(io: CliIO, yes: boolean | undefined, what: string): void {
  if (yes === true || canAsk(io)) return;
  throw new GatewayError(
    'MAILGATE_ERR_CLI_CONSENT_REQUIRED',
    `${what}, and there is no terminal to ask on: pass --yes to go ahead without the question`,
  );
}

/** Asks a yes/no question on stderr and reads the answer from stdin; anything but y/yes is no. */
export async function ask(io: CliIO, question: string): Promise<boolean> {
  const input = io.stdin;
  if (input === undefined) return false;
  const rl = createInterface({ input, output: io.stderr, terminal: false });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^\s*y(es)?\s*$/i.test(answer);
  } catch {
    return false;
  } finally {
    rl.close();
  }
}
