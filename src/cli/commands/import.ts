/** `mailgate import <path...>`: read mail files into the durable outbox and deliver them. */
import type { Command } from 'commander';
import { filterOptions } from '../filter.js';
import { choiceOption, integerOption, leaseMsOption, logFormatOption, routeOptions } from '../options.js';
import { MAX_SYNC_DOCUMENTS } from '../../limits.js';
import { DEFAULT_MAX_DOCUMENTS } from '../../config/defaults.js';
import type { ImportFlags } from '../import/run.js';
import type { CliCommand, CliContext } from '../types.js';

export const importCommand: CliCommand = {
  name: 'import',
  register(program: Command, ctx: CliContext): void {
    const cmd = filterOptions(logFormatOption(routeOptions(program.command('import'))))
      .description(
        'import .eml files, directories, mbox files, maildirs, Outlook .msg and PST/OST files and Google Vault exports: store durably, deliver, resume after interruption',
      )
      .argument('<path...>', 'files or directories to import')
      .option('--dry-run', 'parse and compare with the ledger: report what would be sent and its AI units; send and store nothing')
      .option('--json', 'print one machine-readable summary line on stdout at the end')
      .option('--yes', 'deliver without asking first (needed off a terminal: the estimate of AI units is asked about on one)')
      .option('--workers <n>', 'parse worker threads (default: one fewer than the cores, at least 1)', integerOption(1, 64))
      .option('--mbox <quoting>', 'mboxrd | mboxo | none (default mboxrd)', choiceOption(['mboxrd', 'mboxo', 'none'] as const))
      .option(
        '--batch-size <n>',
        `documents per API request (default: delivery.max_documents, ${DEFAULT_MAX_DOCUMENTS}; at most ${MAX_SYNC_DOCUMENTS})`,
        integerOption(1, MAX_SYNC_DOCUMENTS),
      );
    leaseMsOption(cmd).action(async (paths: string[], flags: ImportFlags) => {
      const { runImport } = await import('../import/run.js');
      ctx.exitCode = await runImport(paths, flags, ctx, process.env);
    });
  },
};
