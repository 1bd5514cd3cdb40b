/** `mailgate preview <path...>`: the documents and comments mail would become, sending nothing. */
import type { Command } from 'commander';
import { filterOptions } from '../filter.js';
import { choiceOption, integerOption } from '../options.js';
import type { PreviewFlags } from '../preview/run.js';
import type { CliCommand, CliContext } from '../types.js';

export const previewCommand: CliCommand = {
  name: 'preview',
  register(program: Command, ctx: CliContext): void {
    filterOptions(program.command('preview'))
      .description(
        'parse .eml files, directories, mbox files, maildirs, Outlook .msg and PST/OST files and Google Vault exports and show the document and comment of each message',
      )
      .argument('<path...>', 'files or directories to read')
      .option(
        '--format <format>',
        'table | json | jsonl (default: table on a terminal, jsonl otherwise)',
        choiceOption(['table', 'json', 'jsonl'] as const),
      )
      .option('--body <body>', 'auto | plain | html: which body the document sends', choiceOption(['auto', 'plain', 'html'] as const))
      .option('--headers <headers>', 'raw | parsed: how the document sends the headers', choiceOption(['raw', 'parsed'] as const))
      .option('--max-message-bytes <n>', 'size budget of one message in bytes', integerOption(0))
      .option('--timeout-ms <n>', 'time budget to parse one message in ms', integerOption(1))
      .option('--workers <n>', 'parse worker threads (default: one fewer than the cores, at least 1)', integerOption(1))
      .option(
        '--mbox <quoting>',
        'mboxrd | mboxo | none: how ">From " lines in mbox files are unquoted (default mboxrd)',
        choiceOption(['mboxrd', 'mboxo', 'none'] as const),
      )
      .action(async (paths: string[], flags: PreviewFlags) => {
        // Loaded when run: `mailgate --help` and the other commands do not pay for it.
        const { runPreview } = await import('../preview/run.js');
        ctx.exitCode = await runPreview(paths, flags, ctx);
      });
  },
};
