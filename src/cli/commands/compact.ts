/**
 * `mailgate compact`: converts a SQLite store created before incremental auto-vacuum was the
 * default, once, by rewriting it (VACUUM); from then on retention gives pruned space back by
 * itself. It holds the store's write lock throughout, so it refuses while a process is
 * registered on the store (stop `mailgate serve` first), unless `--force`.
 */
import type { Command } from 'commander';
import { GatewayError } from '../../errors.js';
import type { StoreFlags } from '../store.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface CompactFlags extends StoreFlags {
  force?: boolean;
  json?: boolean;
}

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

async function run(flags: CompactFlags, ctx: CliContext): Promise<void> {
  const [{ sqliteFileFrom, withStore }, { compactSqlite }] = await Promise.all([
    import('../store.js'),
    import('../../store/sqlite/backup.js'),
  ]);
  const path = await sqliteFileFrom(flags, process.env, '`mailgate compact`');
  // Owners whose heartbeat is live (a crashed process's row stays until reaped: not running).
  const running = (await withStore(flags, process.env, (s) => s.listOwners())).filter((o) => o.heartbeatAgeMs < 3 * o.heartbeatMs);
  if (running.length > 0 && flags.force !== true) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `processes are registered on this store (${running.map((o) => `${o.id}, heartbeat ${Math.round(o.heartbeatAgeMs / 1000)} s ago`).join('; ')}): ` +
        'compacting holds its write lock for the whole rewrite, so their writes would fail meanwhile. Stop them first, or pass --force',
    );
  }
  const r = compactSqlite(path);
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify({ path, ...r })}\n`);
  await write(`compacted ${path}: ${mib(r.before)} → ${mib(r.after)} in ${(r.ms / 1000).toFixed(1)} s; auto-vacuum is now incremental\n`);
}

export const compactCommand: CliCommand = {
  name: 'compact',
  register(program: Command, ctx: CliContext): void {
    program
      .command('compact')
      .description(
        'rewrite a SQLite store once so that it gives pruned space back (incremental auto-vacuum); needs free disk of up to twice its size; stop mailgate serve first',
      )
      .option('--config <file>', 'mailgate.yaml (for its store)')
      .option('--store <url>', `sqlite:PATH (default ${DEFAULT_STORE_URL})`)
      .option('--force', 'compact even while processes are registered on the store (their writes wait, then fail, meanwhile)')
      .option('--json', 'one JSON object on stdout')
      .action((flags: CompactFlags) => run(flags, ctx));
  },
};
