/**
 * The Microsoft Graph adapter: Microsoft 365 mailboxes (user and shared) read with one app
 * registration. One configuration entry is one tenant connection; each of its mailboxes is one
 * adapter (so that each runs under its own lease, `graph:<name>/<user>`), sharing the entry's
 * token cache and notification receiver. docs/graph.md describes the behaviour and every option.
 */
import { controlsOf } from '../../src/controls/schema.js';
import { isGatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { processPacer, type ConnectionPacer } from '../../src/pipeline/pacer.js';
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import { WakeWatch, type WakeBoard } from '../../src/pipeline/wake-board.js';
import type { Adapter, AdapterHealth, AfterDeliveryResult, Intake, Origin, PushEndpoint } from '../../src/pipeline/types.js';
import type { TokenCache } from '../../src/tokens.js';
import { applyAction } from './actions.js';
import { graphTokens } from './auth.js';
import { MailboxClient } from './client.js';
import { parseAction, type AfterDeliveryAction, type GraphEntry } from './config.js';
import { MailboxLimiter } from './limiter.js';
import { MailboxRunner } from './mailbox.js';
import { Subscriber } from './subscriptions.js';

export { duplicateEntry, graphEntrySchema, type GraphEntry } from './config.js';

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
export class GraphMailboxAdapter implements Adapter {
  readonly kind = 'graph';
  readonly mode = 'pull';
  private readonly action: AfterDeliveryAction;
  private readonly folderIds = new Map<string, string>();
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
    const mine = origins.filter((o) => o.adapter === 'graph' && o.instance === this.name);
    const skipped = origins.filter((o) => !mine.includes(o));
    if (mine.length === 0 || this.action.kind === 'none') return { applied: mine, skipped };
    if (!this.runner.active) return { applied: [], deferred: mine, skipped };
    const { client, entry, log } = this.runner.opts;
    try {
      await applyAction(client, this.action, mine, entry.max_in_flight, this.stop.signal, this.folderIds);
      delete this.runner.health.actionError;
      return { applied: mine, skipped };
    } catch (err) {
      if (isGatewayError(err, 'MAILGATE_ERR_GRAPH_MOVE_FOLDER')) {
        // Retrying cannot make the folder exist: finished unapplied, the reason logged and shown in the mailbox's status.
        this.runner.health.actionError = { code: err.code, message: err.message, at: new Date().toISOString(), skipped: mine.length };
        log.error({ code: err.code, count: mine.length }, `${err.message}; ${mine.length} message(s) stay where they are`);
        return { applied: [], skipped: [...skipped, ...mine] };
      }
      const code = (err as { code?: string }).code ?? 'MAILGATE_ERR_GRAPH_UNAVAILABLE';
      log.warn({ code, count: mine.length }, `after-delivery ${this.action.kind} failed: ${(err as Error).message}; the actions stay due`);
      return { applied: [], deferred: mine, skipped };
    }
  }
}

/** The adapters of one entry, one per mailbox; the first serves the entry's notification receiver. */
export function createGraphAdapters(entry: GraphEntry, opts: GraphAdapterOptions): GraphMailboxAdapter[] {
  const tokens = opts.tokens ?? graphTokens(entry);
  const pacer = opts.pacer ?? processPacer();
  const base = opts.logger.child({ adapter: 'graph', instance: entry.name });
  const subscriber = entry.notifications ? new Subscriber({ ...entry, notifications: entry.notifications }, base, opts.board) : undefined;
  return entry.mailboxes.map((m, i) => {
    const instance = `${entry.name}/${m.user}`;
    const limiter = new MailboxLimiter({ concurrency: entry.max_in_flight, perWindow: entry.max_requests_per_10_min, windowMs: WINDOW_MS });
    const client = new MailboxClient(entry.graph_url.replace(/\/$/, ''), m.user, tokens, limiter, entry.request_timeout_ms);
    const runner = new MailboxRunner({
      entry,
      user: m.user,
      folders: m.folders,
      instance,
      client,
      log: base.child({ mailbox: m.user }),
      ...(subscriber ? { subscriber } : {}),
      ...(subscriber && opts.board ? { board: new WakeWatch(opts.board, `graph:${instance}`, entry.wake_check_ms) } : {}),
      paced: (signal) => pacer.acquire(signal),
      controls: controlsOf(m),
    });
    return new GraphMailboxAdapter(instance, runner, i === 0 ? subscriber?.endpoint() : undefined);
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
