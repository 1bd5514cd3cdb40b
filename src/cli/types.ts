/** What a command module needs from the outside world (injected, so commands are testable). */
import type { Command } from 'commander';

export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Where answers to a question come from (src/cli/consent.ts); absent: nothing can be asked. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The IO plus the exit code a command decides (0 unless it sets one). */
export interface CliContext extends CliIO {
  exitCode: number;
}

/** One `mailgate` command: a file under src/cli/commands/ and one line in its index. */
export interface CliCommand {
  name: string;
  register(program: Command, ctx: CliContext): void;
}
