/**
 * `mailgate backup FILE`: a consistent copy of a SQLite store, also while `mailgate serve`
 * writes to it (SQLite's online backup, never a file copy); docs/store.md "Backups" says how
 * to restore it and what a restore means.
 */
import type { Command } from 'commander';
import type { StoreFlags } from '../store.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface BackupFlags extends StoreFlags {
  json?: boolean;
}

async function run(file: string, flags: BackupFlags, ctx: CliContext): Promise<void> {
  const [{ sqliteFileFrom }, { backupSqlite }] = await Promise.all([import('../store.js'), import('../../store/sqlite/backup.js')]);
  const source = await sqliteFileFrom(flags, process.env, '`mailgate backup`');
  const r = await backupSqlite(source, file);
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify({ source, file, ...r })}\n`);
  await write(`backed up ${source} to ${file}: ${r.pages} pages, ${(r.bytes / (1024 * 1024)).toFixed(1)} MiB in ${r.ms} ms\n`);
}

export const backupCommand: CliCommand = {
  name: 'backup',
  register(program: Command, ctx: CliContext): void {
    program
      .command('backup')
      .description('copy a SQLite store consistently, also while mailgate serve runs (restore: docs/store.md "Backups")')
      .argument('<file>', 'the copy to write (must not exist)')
      .option('--config <file>', 'mailgate.yaml (for its store)')
      .option('--store <url>', `sqlite:PATH (default ${DEFAULT_STORE_URL})`)
      .option('--json', 'one JSON object on stdout')
      .action((file: string, flags: BackupFlags) => run(file, flags, ctx));
  },
};
