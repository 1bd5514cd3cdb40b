/**
 * One mailbox of a Graph connection (the shared loop: src/pipeline/mailbox-loop.ts): resolves its
 * folders, runs a delta round of each, then waits for a change notification (which wakes the
 * folder it names) or the safety poll (every folder), and keeps its subscriptions renewed. A
 * failure — the token endpoint refusing, Graph answering 401 after a renewal, 403, 404,
 * unreachable — is the mailbox's coded error, retried after a backoff.
 */
import type { ErrorCode } from '../../src/errors.js';
import { MailboxLoop, type MailboxHealth as LoopHealth, type MailboxLoopOptions } from '../../src/pipeline/mailbox-loop.js';
import type { FolderSync, Intake } from '../../src/pipeline/types.js';
import type { MailboxClient } from './client.js';
import type { GraphEntry } from './config.js';
import { resolveFolder } from './folders.js';
import type { Subscriber } from './subscriptions.js';
import { deltaRound, type FolderTarget } from './sync.js';

export type { MailboxState } from '../../src/pipeline/mailbox-loop.js';

const KIND = {
  kind: 'graph',
  unavailable: 'MAILGATE_ERR_GRAPH_UNAVAILABLE',
  refusals: new Set<ErrorCode>([
    'MAILGATE_ERR_GRAPH_TOKEN',
    'MAILGATE_ERR_GRAPH_UNAUTHORIZED',
    'MAILGATE_ERR_GRAPH_FORBIDDEN',
    'MAILGATE_ERR_GRAPH_NOT_FOUND',
  ]),
} as const;

export interface MailboxHealth extends LoopHealth {
  /** Of the messages, read through $select/$expand with attachments left on the server. */
  withoutAttachmentBytes: number;
  throttled: number;
  /** Per folder; `behind`: messages left to read in the round under way, where Graph tells. */
  folders: Record<string, { lastSyncAt?: string; syncedUntil?: string; inProgress?: boolean; behind?: number }>;
  /** The last after-delivery failure that finished actions unapplied (the move folder missing); cleared by the next applied batch. */
  actionError?: { code: string; message: string; at: string; skipped: number };
}

export interface MailboxOptions extends MailboxLoopOptions {
  entry: GraphEntry;
  folders: string[];
  client: MailboxClient;
  subscriber?: Subscriber;
}

export class MailboxRunner extends MailboxLoop<MailboxHealth, MailboxOptions> {
  private targets: FolderTarget[] = [];
  /** Folders a notification named since the last round (all of them when the poll is due). */
  private readonly dirty = new Set<string>();

  constructor(opts: MailboxOptions) {
    super(opts, KIND, { withoutAttachmentBytes: 0, throttled: 0, folders: {} });
    opts.client.onThrottle = (waitMs, status) =>
      opts.log.warn(
        { code: 'MAILGATE_ERR_GRAPH_THROTTLED', status, retryInMs: Math.round(waitMs) },
        `throttled by Graph (${status}); waiting ${Math.round(waitMs)} ms`,
      );
  }

  /** A notification (or a `missed` lifecycle event) for a folder id; undefined: every folder. */
  wake(folderId?: string): void {
    if (folderId === undefined) for (const t of this.targets) this.dirty.add(t.id);
    else this.dirty.add(folderId);
    this.wakeIdle();
  }

  protected get ready(): boolean {
    return this.targets.length > 0;
  }

  protected get pending(): boolean {
    return this.dirty.size > 0;
  }

  protected override starting(): void {
    this.opts.subscriber?.reset(this);
  }

  /** The token and (first, or after a folder vanished) the folders: the mailbox's first requests. */
  protected async prepare(signal: AbortSignal): Promise<void> {
    if (this.targets.length === 0) this.targets = await this.resolve(signal);
    else await this.opts.client.token(signal);
  }

  private async resolve(signal: AbortSignal): Promise<FolderTarget[]> {
    const out: FolderTarget[] = [];
    for (const path of this.opts.folders.filter((f) => this.filter.folder(f))) {
      const id = await resolveFolder(this.opts.client, path, signal);
      out.push({ path, id, key: `graph:${this.opts.instance}:${path}` });
    }
    return out;
  }

  /** Folder ids to read: those notified, or (undefined) every folder. */
  private takeDirty(): Set<string> | undefined {
    if (this.dirty.size === 0) return undefined;
    const d = new Set(this.dirty);
    this.dirty.clear();
    return d;
  }

  protected async round(sink: Intake, signal: AbortSignal, retrying: boolean): Promise<void> {
    const only = retrying ? undefined : this.takeDirty();
    const { entry, client, log, instance } = this.opts;
    const since = await this.since(sink);
    for (const target of this.targets) {
      if (only !== undefined && !only.has(target.id)) continue;
      const started = new Date().toISOString();
      this.health.folders[target.path] = { ...this.health.folders[target.path], inProgress: true };
      await deltaRound(
        {
          client,
          sink,
          log,
          instance,
          route: entry.route,
          afterDelivery: entry.after_delivery !== 'none',
          pageSize: entry.page_size,
          slots: entry.max_in_flight,
          signal,
          onStored: (n, viaJson) => {
            this.health.messages += n;
            this.health.withoutAttachmentBytes += viaJson;
          },
          filter: this.filter,
          since,
          onFiltered: (folder, reason) => this.leftOut(sink, folder, reason),
          onBehind: (n) => (this.health.folders[target.path] = { ...this.health.folders[target.path], behind: n }),
        },
        target,
      );
      this.health.folders[target.path] = { lastSyncAt: new Date().toISOString(), syncedUntil: started };
    }
    this.health.requests = client.stats.counted;
    this.health.throttled = client.stats.throttled;
  }

  protected async renew(sink: Intake, signal: AbortSignal): Promise<void> {
    await this.opts.subscriber?.ensure(this, this.targets, signal, sink, this.opts.board?.takeNotes());
  }

  protected renewalMs(): number {
    return this.opts.subscriber?.nextRenewalMs(this) ?? Number.POSITIVE_INFINITY;
  }

  /** A folder that vanished is looked up again at the next attempt. */
  protected override failed(code: ErrorCode): void {
    if (code === 'MAILGATE_ERR_GRAPH_NOT_FOUND') this.targets = [];
  }

  protected folderSyncs(): FolderSync[] {
    return this.opts.folders.map((folder): FolderSync => {
      const f = this.health.folders[folder];
      const done = f?.inProgress !== true && f?.lastSyncAt !== undefined;
      return {
        folder,
        state: done ? 'up_to_date' : 'in_progress',
        ...(f?.syncedUntil ? { syncedUntil: f.syncedUntil } : {}),
        ...(f?.lastSyncAt ? { lastSynced: f.lastSyncAt } : {}),
        ...(f?.behind !== undefined ? { behind: f.behind } : {}),
      };
    });
  }
}
