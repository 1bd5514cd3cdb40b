/**
 * `mailgate mailboxes list|enable|disable` and `mailgate routes resume`: what holds a mailbox
 * or a route back, from the store every replica shares. A disable or enable by command wins
 * over the configuration until the next command; running replicas apply it within
 * `mailboxes.check_ms`, and an enabled mailbox resumes from its checkpoints. Resuming a route
 * deletes its stored pause; the process delivering it claims again within seconds.
 */
import type { Command } from 'commander';
import { GatewayError } from '../../errors.js';
import type { StoreFlags } from '../store.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { mailboxLines } from './status.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface Flags extends StoreFlags {
  json?: boolean;
}

const MAILBOX_RE = /^[a-z]+:\S{1,320}$/;

function mailboxArg(value: string): string {
  if (!MAILBOX_RE.test(value))
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `"${value}" is no mailbox name; use <kind>:<name>, e.g. imap:support (see \`mailgate mailboxes list\`)`,
    );
  return value;
}

async function list(flags: Flags, ctx: CliContext): Promise<void> {
  const { withStore } = await import('../store.js');
  const rows = await withStore(flags, process.env, (s) => s.listMailboxStates());
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify(rows)}\n`);
  const lines =
    rows.length === 0 ? ['(no mailbox has a recorded state yet; every configured mailbox runs as configured)'] : mailboxLines(rows);
  await write(`${lines.map((l) => l.replace(/^ {2}/, '')).join('\n')}\n`);
}

async function set(mailbox: string, enabled: boolean, flags: Flags, ctx: CliContext): Promise<void> {
  const [{ withStore }, { setMailboxEnabled }] = await Promise.all([import('../store.js'), import('../../service/mailboxes.js')]);
  await withStore(flags, process.env, (s) => setMailboxEnabled(s, mailbox, enabled));
  const state = enabled ? 'enabled' : 'disabled';
  const result = { mailbox, state, byCommand: true };
  await writerFor(ctx.stdout)(
    flags.json === true ? `${JSON.stringify(result)}\n` : `${mailbox}: ${state} (running replicas apply it within mailboxes.check_ms)\n`,
  );
}

async function resume(route: string, flags: Flags, ctx: CliContext): Promise<void> {
  const { withStore } = await import('../store.js');
  const resumed = await withStore(flags, process.env, (s) => s.resumeRoute(route));
  const text = resumed ? `${route}: resumed (the process delivering it claims again within seconds)` : `${route}: was not paused`;
  await writerFor(ctx.stdout)(flags.json === true ? `${JSON.stringify({ route, resumed })}\n` : `${text}\n`);
}

const storeOpts = (cmd: Command) =>
  cmd
    .option('--config <file>', 'mailgate.yaml (for its store)')
    .option('--store <url>', `sqlite:PATH or postgres://… (default ${DEFAULT_STORE_URL})`)
    .option('--json', 'one JSON line on stdout');

export const mailboxesCommand: CliCommand = {
  name: 'mailboxes',
  register(program: Command, ctx: CliContext): void {
    const m = program.command('mailboxes').description('list mailbox states, enable or disable a mailbox (every replica, across restarts)');
    storeOpts(m.command('list').description('each mailbox: enabled or disabled (reason, error kind), filtered count, folders')).action(
      (flags: Flags) => list(flags, ctx),
    );
    for (const enabled of [true, false]) {
      storeOpts(
        m
          .command(enabled ? 'enable' : 'disable')
          .description(
            enabled
              ? 'enable a mailbox (wins over the configuration); it resumes from its checkpoints'
              : 'disable a mailbox (reason user) until it is enabled again',
          )
          .argument('<mailbox>', 'mailbox name, e.g. imap:support or graph:contoso/ops@contoso.com', mailboxArg),
      ).action((mailbox: string, flags: Flags) => set(mailbox, enabled, flags, ctx));
    }
  },
};

export const routesCommand: CliCommand = {
  name: 'routes',
  register(program: Command, ctx: CliContext): void {
    const r = program.command('routes').description('route controls');
    storeOpts(
      r.command('resume').description('lift the pause of a route (the API refused it: 401, 402 quota, 403, 404)').argument('<route>'),
    ).action((route: string, flags: Flags) => resume(route, flags, ctx));
  },
};
