/** `mailgate serve`: the long-running service (docs/service.md). */
import type { Command } from 'commander';
import type { LogFormat } from '../../log-pretty.js';
import { DEFAULT_DRAIN_MS } from '../../config/defaults.js';
import { integerOption, leaseMsOption, logFormatOption } from '../options.js';
import type { CliCommand, CliContext } from '../types.js';

interface ServeFlags {
  config?: string;
  drainMs?: number;
  leaseMs?: number;
  logFormat?: LogFormat;
}

async function run(flags: ServeFlags, ctx: CliContext): Promise<void> {
  const { runService } = await import('../../service/run.js');
  ctx.exitCode = await runService({
    ...(flags.config === undefined ? {} : { configFile: flags.config }),
    ...(flags.drainMs === undefined ? {} : { drainMs: flags.drainMs }),
    ...(flags.leaseMs === undefined ? {} : { leaseMs: flags.leaseMs }),
    ...(flags.logFormat === undefined ? {} : { logFormat: flags.logFormat }),
    env: process.env,
    print: (line) => void ctx.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  });
}

export const serveCommand: CliCommand = {
  name: 'serve',
  register(program: Command, ctx: CliContext): void {
    const cmd = logFormatOption(program.command('serve'))
      .description(
        'run adapters, delivery and the HTTP server until SIGTERM/SIGINT (no --config: embedded defaults with the built-in emulator and samples/)',
      )
      .option('--config <file>', 'mailgate.yaml')
      .option(
        '--drain-ms <ms>',
        `on shutdown, wait at most this long for delivery to empty the outbox (overrides delivery.drain_ms, default ${DEFAULT_DRAIN_MS})`,
        integerOption(0, 3_600_000),
      );
    leaseMsOption(cmd).action((flags: ServeFlags) => run(flags, ctx));
  },
};
