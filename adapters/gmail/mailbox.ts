/**
 * One mailbox of a Gmail connection (the shared loop: src/pipeline/mailbox-loop.ts): resolves its
 * labels, runs a round (sync.ts), then waits for a push (which wakes it) or the safety poll, and
 * keeps its watch renewed. A failure — the token endpoint refusing (delegation not granted),
 * Gmail answering 401 after a renewal, 403, 404, unreachable — is the mailbox's coded error,
 * retried after a backoff.
 */
import { GatewayError, type ErrorCode } from '../../src/errors.js';
import { MailboxLoop, type MailboxHealth as LoopHealth, type MailboxLoopOptions } from '../../src/pipeline/mailbox-loop.js';
import type { FolderSync, Intake } from '../../src/pipeline/types.js';
import type { GmailClient } from './client.js';
import type { GmailEntry } from './config.js';
import { round, type LabelTarget } from './sync.js';
import type { Watcher } from './watch.js';

export type { MailboxState } from '../../src/pipeline/mailbox-loop.js';

const KIND = {
  kind: 'gmail',
  unavailable: 'MAILGATE_ERR_GMAIL_UNAVAILABLE',
  refusals: new Set<ErrorCode>([
    'MAILGATE_ERR_GMAIL_DELEGATION',
    'MAILGATE_ERR_GMAIL_TOKEN',
    'MAILGATE_ERR_GMAIL_UNAUTHORIZED',
    'MAILGATE_ERR_GMAIL_FORBIDDEN',
    'MAILGATE_ERR_GMAIL_NOT_FOUND',
  ]),
} as const;

export interface MailboxHealth extends LoopHealth {
  /** Of the messages, read with format=full, attachments left on the server. */
  viaFull: number;
  calls: number;
  quotaUnits: number;
  rateLimited: number;
  pushes: number;
}

export interface MailboxOptions extends MailboxLoopOptions {
  entry: GmailEntry;
  labels: string[];
  client: GmailClient;
  watcher?: Watcher;
}

export class MailboxRunner extends MailboxLoop<MailboxHealth, MailboxOptions> {
  private labels: LabelTarget[] = [];
  private labelNames = new Map<string, string>();
  private dirty = false;
  /** The start of the last complete round. */
  private syncedUntil: string | undefined;
  /** Messages left to read per label (as configured) in the round under way, where Gmail tells. */
  private readonly behind = new Map<string, number>();

  constructor(opts: MailboxOptions) {
    super(opts, KIND, { viaFull: 0, calls: 0, quotaUnits: 0, rateLimited: 0, pushes: 0 });
    opts.client.onRateLimit = (waitMs, status) =>
      opts.log.warn(
        { code: 'MAILGATE_ERR_GMAIL_RATE_LIMITED', status, retryInMs: Math.round(waitMs) },
        `rate limited by Gmail (${status}); waiting ${Math.round(waitMs)} ms`,
      );
  }

  /** A push named this mailbox: a history round now. */
  wake(): void {
    this.dirty = true;
    this.health.pushes += 1;
    this.wakeIdle();
  }

  /** The label ids read (for users.watch). */
  get labelIds(): string[] {
    return this.labels.map((l) => l.id);
  }

  protected get ready(): boolean {
    return this.labels.length > 0;
  }

  protected get pending(): boolean {
    return this.dirty;
  }

  protected async prepare(signal: AbortSignal): Promise<void> {
    await this.opts.client.token(signal);
    this.labels = await this.resolve(signal);
  }

  /** Configured labels (ids or names) to ids, through labels.list. */
  private async resolve(signal: AbortSignal): Promise<LabelTarget[]> {
    const res = await this.opts.client.call<{ labels?: Array<{ id: string; name: string }> }>('labels.list', '/labels', { signal });
    const all = res.labels ?? [];
    this.labelNames = new Map(all.map((l) => [l.id, l.name]));
    return this.opts.labels.map((given) => {
      const found = all.find((l) => l.id === given) ?? all.find((l) => l.name.toLowerCase() === given.toLowerCase());
      if (found === undefined)
        throw new GatewayError(
          'MAILGATE_ERR_GMAIL_NOT_FOUND',
          `label "${given}" does not exist in ${this.opts.user} (give a label id or name)`,
        );
      return { given, id: found.id, name: found.name };
    });
  }

  protected async round(sink: Intake, signal: AbortSignal): Promise<void> {
    this.dirty = false;
    const { entry, client, log, instance } = this.opts;
    const since = await this.since(sink);
    const started = new Date().toISOString();
    this.behind.clear();
    await round({
      filter: this.filter,
      since,
      onFiltered: (label, reason) => this.leftOut(sink, label, reason),
      client,
      sink,
      log,
      instance,
      route: entry.route,
      labels: this.labels,
      labelNames: this.labelNames,
      afterDelivery: entry.after_delivery !== 'none',
      pageSize: entry.page_size,
      batchSize: entry.batch_size,
      fullOverBytes: entry.full_format_over_bytes,
      signal,
      onStored: (n, viaFull) => {
        this.health.messages += n;
        this.health.viaFull += viaFull;
      },
      onBehind: (label, n) => this.behind.set(label.given, n),
    });
    this.behind.clear();
    this.syncedUntil = started;
    const s = client.stats;
    Object.assign(this.health, { requests: s.requests, calls: s.calls, quotaUnits: s.units, rateLimited: s.rateLimited });
  }

  protected async renew(_sink: Intake, signal: AbortSignal): Promise<void> {
    await this.opts.watcher?.ensure(this, signal);
  }

  protected renewalMs(): number {
    return this.opts.watcher?.nextRenewalMs(this) ?? Number.POSITIVE_INFINITY;
  }

  /** Stopping while the mailbox is still read here: its watch ends (users.stop). */
  protected override async stopped(sink: Intake): Promise<void> {
    await this.opts.watcher?.stop(this, sink);
  }

  /** One history cursor for the mailbox: each label is as far as the last round. */
  protected folderSyncs(): FolderSync[] {
    const h = this.health;
    return this.opts.labels.map(
      (label): FolderSync => ({
        folder: label,
        state: h.state !== 'syncing' && h.lastSyncAt !== undefined ? 'up_to_date' : 'in_progress',
        ...(this.syncedUntil ? { syncedUntil: this.syncedUntil } : {}),
        ...(h.lastSyncAt ? { lastSynced: h.lastSyncAt } : {}),
        ...(this.behind.has(label) ? { behind: this.behind.get(label)! } : {}),
      }),
    );
  }
}
