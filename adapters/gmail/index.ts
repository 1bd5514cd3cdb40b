/**
 * The Gmail adapter: Google Workspace mailboxes read through the Gmail API, with a service
 * account's domain-wide delegation (or one user's refresh token). One configuration entry is one
 * connection; each of its mailboxes is one adapter (so that each runs under its own lease,
 * `gmail:<name>/<user>`), sharing the entry's credential and push endpoint. docs/gmail.md
 * describes the behaviour and every option.
 */
import { controlsOf } from '../../src/controls/schema.js';
import type { Logger } from '../../src/logger.js';
import { processPacer, type ConnectionPacer } from '../../src/pipeline/pacer.js';
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import { WakeWatch, type WakeBoard } from '../../src/pipeline/wake-board.js';
import type { Adapter, AdapterHealth, AfterDeliveryResult, Intake, Origin, PushEndpoint } from '../../src/pipeline/types.js';
import { applyAction } from './actions.js';
import { gmailTokens, type GmailTokens } from './auth.js';
import { GmailClient } from './client.js';
import { parseAction, type AfterDeliveryAction, type GmailEntry } from './config.js';
import { MailboxRunner } from './mailbox.js';
import { QuotaBucket } from './quota.js';
import { Watcher } from './watch.js';

export { duplicateEntry, gmailEntrySchema, type GmailEntry } from './config.js';

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
export class GmailMailboxAdapter implements Adapter {
  readonly kind = 'gmail';
  readonly mode = 'pull';
  private readonly action: AfterDeliveryAction;
  private readonly labelIds = new Map<string, string>();
  private readonly stop = new AbortController();
  readonly controls: { enabled: boolean; disableAfterMs: number };

  constructor(
    readonly name: string,
    readonly runner: MailboxRunner,
    private readonly receiver: PushEndpoint | undefined,
  ) {
    this.action = parseAction(runner.opts.entry.after_delivery);
    this.controls = { enabled: runner.opts.controls.enabled, disableAfterMs: runner.opts.controls.disable_after_ms };
  }

  async start(sink: Intake, signal: AbortSignal): Promise<void> {
    await this.runner.run(sink, AbortSignal.any([signal, this.stop.signal]));
  }

  health(): AdapterHealth[] {
    return [this.runner.line()];
  }

  endpoints(): PushEndpoint[] {
    return this.receiver ? [this.receiver] : [];
  }

  /**
   * Applies the mailbox's action to its origins (others are skipped). Not read here (another
   * replica holds the lease, or stopped): deferred, as is everything after a failure (logged).
   */
  async afterDelivery(origins: Origin[]): Promise<AfterDeliveryResult> {
    const mine = origins.filter((o) => o.adapter === 'gmail' && o.instance === this.name);
    const skipped = origins.filter((o) => !mine.includes(o));
    if (mine.length === 0 || this.action.kind === 'none') return { applied: mine, skipped };
    if (!this.runner.active) return { applied: [], deferred: mine, skipped };
    const { client, entry, log } = this.runner.opts;
    try {
      await applyAction(client, this.action, mine, entry.batch_size, this.stop.signal, this.labelIds);
      return { applied: mine, skipped };
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'MAILGATE_ERR_GMAIL_UNAVAILABLE';
      log.warn({ code, count: mine.length }, `after-delivery ${this.action.kind} failed: ${(err as Error).message}; the actions stay due`);
      return { applied: [], deferred: mine, skipped };
    }
  }
}

/** The adapters of one entry, one per mailbox; the first serves the entry's push endpoint. */
export function createGmailAdapters(entry: GmailEntry, opts: GmailAdapterOptions): GmailMailboxAdapter[] {
  const tokens = opts.tokens ?? gmailTokens(entry);
  const pacer = opts.pacer ?? processPacer();
  const base = opts.logger.child({ adapter: 'gmail', instance: entry.name });
  const watcher = entry.notifications ? new Watcher({ ...entry, notifications: entry.notifications }, base, opts.board) : undefined;
  const apiUrl = entry.api_url.replace(/\/$/, '');
  return entry.mailboxes.map((m, i) => {
    const instance = `${entry.name}/${m.user}`;
    const quota = new QuotaBucket({ perSecond: entry.quota_units_per_second, perMinute: entry.quota_units_per_minute });
    const client = new GmailClient(apiUrl, m.user, tokens.forUser(m.user), quota, entry.request_timeout_ms);
    const runner = new MailboxRunner({
      entry,
      user: m.user,
      labels: m.labels,
      instance,
      client,
      log: base.child({ mailbox: m.user }),
      ...(watcher ? { watcher } : {}),
      ...(watcher && opts.board ? { board: new WakeWatch(opts.board, `gmail:${instance}`, entry.wake_check_ms) } : {}),
      paced: (signal) => pacer.acquire(signal),
      controls: controlsOf(m),
    });
    return new GmailMailboxAdapter(instance, runner, i === 0 ? watcher?.endpoint() : undefined);
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
