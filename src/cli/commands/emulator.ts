/** `mailgate emulator`: a local stand-in for the Text Analytics API, until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { integerOption } from '../options.js';
import type { CliCommand, CliContext } from '../types.js';

interface EmulatorFlags {
  port: number;
  token: string;
  host?: string;
  data?: string;
  faults?: string;
}

async function run(flags: EmulatorFlags, ctx: CliContext): Promise<void> {
  const { runEmulatorCommand } = await import('../../emulator/index.js');
  await runEmulatorCommand({
    port: flags.port,
    host: flags.host,
    token: flags.token,
    dataDir: flags.data,
    faults: flags.faults,
    print: (line) => void ctx.stdout.write(`${line}\n`),
    handleSignals: true,
  });
}

export const emulatorCommand: CliCommand = {
  name: 'emulator',
  register(program: Command, ctx: CliContext): void {
    program
      .command('emulator')
      .description('run a local Text Analytics API emulator (stops on SIGINT/SIGTERM)')
      .requiredOption('--port <n>', 'TCP port (0 picks a free one)', integerOption(0, 65535))
      .requiredOption('--token <token>', 'bearer token the emulator accepts')
      .option('--host <host>', 'interface to bind', '127.0.0.1')
      .option('--data <dir>', 'persist state in this directory and reload it on start')
      .option('--faults <spec>', 'fault injection spec (docs/emulator.md)')
      .action((flags: EmulatorFlags) => run(flags, ctx));
  },
};
