/** Builds the `mailgate` program from the command list; no side effects until parsed. */
import { Command, CommanderError } from 'commander';
import { isGatewayError } from '../errors.js';
import { loadCommands } from './commands/index.js';
import type { CliCommand, CliContext, CliIO } from './types.js';

import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';

export { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** `commands` from loadCommands(): every command, or only the one a run names. */
export function buildProgram(ctx: CliContext, commands: readonly CliCommand[], version = '0.0.0'): Command {
  const io = ctx;
  const program = new Command('mailgate')
    .description('Email ingestion gateway for the Text Analytics API')
    .version(version)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });
  for (const command of commands) command.register(program, ctx);
  return program;
}

/** Parses argv and runs the command; resolves with the exit code. */
export async function runCli(argv: string[], io: CliIO, version?: string): Promise<number> {
  const ctx: CliContext = { ...io, exitCode: EXIT_OK };
  const program = buildProgram(ctx, await loadCommands(argv[2]), version);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return EXIT_OK;
      return EXIT_USAGE;
    }
    if (isGatewayError(err) && err.code === 'MAILGATE_ERR_CLI_USAGE') {
      io.stderr.write(`mailgate: ${err.code}: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
  return ctx.exitCode;
}
