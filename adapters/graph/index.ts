/**
 * The Microsoft Graph adapter: Microsoft 365 mailboxes (user and shared) read with one app
 * registration. One configuration entry is one tenant connection; each of its mailboxes is one
 * adapter (so that each runs under its own lease, `graph:<name>/<user>`), sharing the entry's
 * token cache and notification receiver. docs/graph.md describes the behaviour and every option.
 */
import { isGatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { processPacer, type ConnectionPacer } from '../../src/pipeline/pacer.js';
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import type { WakeBoard } from '../../src/pipeline/wake-board.js';
import { MailboxAdapter, mailboxLoopOptions } from '../../src/pipeline/mailbox-adapter.js';
import type { AfterDeliveryResult, Origin, PushEndpoint } from '../../src/pipeline/types.js';
import type { TokenCache } from '../../src/tokens.js';
import { applyAction } from './actions.js';
import { graphTokens } from './auth.js';
import { MailboxClient } from './client.js';
import { parseAction, type AfterDeliveryAction, type GraphEntry } from './config.js';
import { MailboxLimiter } from './limiter.js';
import { MailboxRunner } from './mailbox.js';
import { Subscriber } from './subscriptions.js';

export { graphEntrySchema, type GraphEntry } from './config.js';

const WINDOW_MS = 10 * 60_000;

export interface GraphAdapterOptions {
  logger: Logger;
  /** Shared by every mailbox of the entry (one app registration). Default: msal-node for the entry. */
  tokens?: TokenCache;
  /** The pacer of mailbox starts and retries. Default: the process's (src/pipeline/pacer.ts), shared with IMAP. */
  pacer?: ConnectionPacer;
  /** With notifications: how a notification reaching this process reaches the replica reading its mailbox. */
  board?: WakeBoard;
}

/** One mailbox of a tenant connection. */
export class GraphMailboxAdapter extends MailboxAdapter<MailboxRunner> {
  readonly kind = 'graph';
  private readonly action: AfterDeliveryAction;
  private readonly folderIds = new Map<string, string>();

  constructor(name: string, runner: MailboxRunner, receiver: PushEndpoint | undefined) {
    const action = parseAction(runner.opts.entry.after_delivery);
    super(name, runner, receiver, action.kind);
    this.action = action;
  }

  protected async apply(mine: Origin[]): Promise<void> {
    const { client, entry } = this.runner.opts;
    await applyAction(client, this.action, mine, entry.max_in_flight, this.stop.signal, this.folderIds);
    delete this.runner.health.actionError;
  }

  /** The move folder missing: retrying cannot make it exist; finished unapplied, the reason logged and shown in the mailbox's status. */
  protected override settle(err: unknown, mine: Origin[], skipped: Origin[]): AfterDeliveryResult | undefined {
    if (!isGatewayError(err, 'MAILGATE_ERR_GRAPH_MOVE_FOLDER')) return undefined;
    this.runner.health.actionError = { code: err.code, message: err.message, at: new Date().toISOString(), skipped: mine.length };
    this.runner.opts.log.error({ code: err.code, count: mine.length }, `${err.message}; ${mine.length} message(s) stay where they are`);
    return { applied: [], skipped: [...skipped, ...mine] };
  }
}

/** The adapters of one entry, one per mailbox; the first serves the entry's notification receiver. */
export function createGraphAdapters(entry: GraphEntry, opts: GraphAdapterOptions): GraphMailboxAdapter[] {
  const tokens = opts.tokens ?? graphTokens(entry);
  const pacer = opts.pacer ?? processPacer();
  // The entry's receiver logs under the entry's name (a push it refuses names no mailbox); each mailbox under its own instance, `<name>/<user>`.
  const base = opts.logger.child({ adapter: 'graph', instance: entry.name });
  const subscriber = entry.notifications ? new Subscriber({ ...entry, notifications: entry.notifications }, base, opts.board) : undefined;
  const shared = { logger: opts.logger, pacer, board: subscriber && opts.board };
  return entry.mailboxes.map((m, i) => {
    const common = mailboxLoopOptions('graph', entry, m, shared);
    const limiter = new MailboxLimiter({ concurrency: entry.max_in_flight, perWindow: entry.max_requests_per_10_min, windowMs: WINDOW_MS });
    const client = new MailboxClient(entry.graph_url.replace(/\/$/, ''), m.user, tokens, limiter, entry.request_timeout_ms);
    const runner = new MailboxRunner({ ...common, entry, folders: m.folders, client, ...(subscriber ? { subscriber } : {}) });
    return new GraphMailboxAdapter(common.instance, runner, i === 0 ? subscriber?.endpoint() : undefined);
  });
}

/** The registry's factory: one adapter per mailbox of `adapters.graph[i]`. */
export function create(entry: GraphEntry, ctx: KindContext): GraphMailboxAdapter[] {
  return createGraphAdapters(entry, {
    logger: ctx.logger,
    pacer: ctx.pacer,
    tokens: graphTokens(entry, ctx.tokenCache),
    ...(ctx.wakeBoard && { board: ctx.wakeBoard }),
  });
}

/** The kind's implementation (adapters/graph/kind.ts). */
export const implementation: KindImplementation<GraphEntry> = { create };
