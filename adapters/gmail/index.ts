/**
 * The Gmail adapter: Google Workspace mailboxes read through the Gmail API, with a service
 * account's domain-wide delegation (or one user's refresh token). One configuration entry is one
 * connection; each of its mailboxes is one adapter (so that each runs under its own lease,
 * `gmail:<name>/<user>`), sharing the entry's credential and push endpoint. docs/gmail.md
 * describes the behaviour and every option.
 */
import type { Logger } from '../../src/logger.js';
import { processPacer, type ConnectionPacer } from '../../src/pipeline/pacer.js';
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import type { WakeBoard } from '../../src/pipeline/wake-board.js';
import { MailboxAdapter, mailboxLoopOptions } from '../../src/pipeline/mailbox-adapter.js';
import type { Origin, PushEndpoint } from '../../src/pipeline/types.js';
import { applyAction } from './actions.js';
import { gmailTokens, type GmailTokens } from './auth.js';
import { GmailClient } from './client.js';
import { parseAction, type AfterDeliveryAction, type GmailEntry } from './config.js';
import { MailboxRunner } from './mailbox.js';
import { QuotaBucket } from './quota.js';
import { Watcher } from './watch.js';

export { gmailEntrySchema, type GmailEntry } from './config.js';

export interface GmailAdapterOptions {
  logger: Logger;
  /** The entry's token source. Default: google-auth-library for the entry's credential. */
  tokens?: GmailTokens;
  /** The pacer of mailbox starts and retries. Default: the process's, shared with IMAP and Graph. */
  pacer?: ConnectionPacer;
  /** With notifications: how a push reaching this process reaches the replica reading its mailbox. */
  board?: WakeBoard;
}

/** One mailbox of a Workspace connection. */
export class GmailMailboxAdapter extends MailboxAdapter<MailboxRunner> {
  readonly kind = 'gmail';
  private readonly action: AfterDeliveryAction;
  private readonly labelIds = new Map<string, string>();

  constructor(name: string, runner: MailboxRunner, receiver: PushEndpoint | undefined) {
    const action = parseAction(runner.opts.entry.after_delivery);
    super(name, runner, receiver, action.kind);
    this.action = action;
  }

  protected async apply(mine: Origin[]): Promise<void> {
    const { client, entry } = this.runner.opts;
    await applyAction(client, this.action, mine, entry.batch_size, this.stop.signal, this.labelIds);
  }
}

/** The adapters of one entry, one per mailbox; the first serves the entry's push endpoint. */
export function createGmailAdapters(entry: GmailEntry, opts: GmailAdapterOptions): GmailMailboxAdapter[] {
  const tokens = opts.tokens ?? gmailTokens(entry);
  const pacer = opts.pacer ?? processPacer();
  // The entry's receiver logs under the entry's name (a push it refuses names no mailbox); each mailbox under its own instance, `<name>/<user>`.
  const base = opts.logger.child({ adapter: 'gmail', instance: entry.name });
  const watcher = entry.notifications ? new Watcher({ ...entry, notifications: entry.notifications }, base, opts.board) : undefined;
  const apiUrl = entry.api_url.replace(/\/$/, '');
  const shared = { logger: opts.logger, pacer, board: watcher && opts.board };
  return entry.mailboxes.map((m, i) => {
    const common = mailboxLoopOptions('gmail', entry, m, shared);
    const quota = new QuotaBucket({ perSecond: entry.quota_units_per_second, perMinute: entry.quota_units_per_minute });
    const client = new GmailClient(apiUrl, m.user, tokens.forUser(m.user), quota, entry.request_timeout_ms);
    const runner = new MailboxRunner({ ...common, entry, labels: m.labels, client, ...(watcher ? { watcher } : {}) });
    return new GmailMailboxAdapter(common.instance, runner, i === 0 ? watcher?.endpoint() : undefined);
  });
}

/** The registry's factory: one adapter per mailbox of `adapters.gmail[i]`. */
export function create(entry: GmailEntry, ctx: KindContext): GmailMailboxAdapter[] {
  return createGmailAdapters(entry, {
    logger: ctx.logger,
    pacer: ctx.pacer,
    tokens: gmailTokens(entry, ctx.tokenCache),
    ...(ctx.wakeBoard && { board: ctx.wakeBoard }),
  });
}

/** The kind's implementation (adapters/gmail/kind.ts). */
export const implementation: KindImplementation<GmailEntry> = { create };
