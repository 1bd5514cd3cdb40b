/**
 * One mailbox of a Graph connection: resolves its folders, runs a delta round of each, then
 * waits for a change notification (which wakes the folder it names) or the safety poll
 * (`poll_interval_ms`, every folder), and keeps its subscriptions renewed. A failure — the
 * token endpoint refusing, Graph answering 401 after a renewal, 403, 404, unreachable — is
 * recorded as the mailbox's coded error and retried after a backoff; other mailboxes never wait
 * for it.
 */
import { isGatewayError, type ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { sleep } from '../../src/pipeline/sleep.js';
import { MailboxRecord } from '../../src/pipeline/mailbox-record.js';
import type { AdapterHealth, FolderSync, Intake } from '../../src/pipeline/types.js';
import { compileFilter, type MessageFilter } from '../../src/controls/filter.js';
import type { MailboxControls } from '../../src/controls/schema.js';
import { resolveSince } from '../../src/controls/since.js';
import type { WakeWatch } from '../../src/pipeline/wake-board.js';
import { backoffDelay, type Backoff } from '../../src/retry.js';
import type { MailboxClient } from './client.js';
import type { GraphEntry } from './config.js';
import { resolveFolder } from './folders.js';
import type { Subscriber } from './subscriptions.js';
import { deltaRound, type FolderTarget } from './sync.js';

export type MailboxState = 'starting' | 'syncing' | 'idle' | 'backoff' | 'stopped';

/** Refusals (credentials, permission, existence) wait long; transient failures short. */
const REFUSED: Backoff = { baseMs: 30_000, capMs: 30 * 60_000, jitter: 'equal' };
const TRANSIENT: Backoff = { baseMs: 1_000, capMs: 60_000, jitter: 'full' };
const REFUSALS = new Set<ErrorCode>([
  'MAILGATE_ERR_GRAPH_TOKEN',
  'MAILGATE_ERR_GRAPH_UNAUTHORIZED',
  'MAILGATE_ERR_GRAPH_FORBIDDEN',
  'MAILGATE_ERR_GRAPH_NOT_FOUND',
]);

export interface MailboxHealth {
  mailbox: string;
  state: MailboxState;
  lastError?: { code: string; message: string; at: string };
  lastSyncAt?: string;
  nextAttemptAt?: string;
  failures: number;
  messages: number;
  /** Of those, read through $select/$expand with attachments left on the server. */
  withoutAttachmentBytes: number;
  requests: number;
  throttled: number;
  /** Messages left out by the mailbox's controls (participants, skip, since): never handed to intake. */
  filtered: number;
  folders: Record<string, { lastSyncAt?: string; syncedUntil?: string; inProgress?: boolean }>;
  /** The last after-delivery failure that finished actions unapplied (the move folder missing); cleared by the next applied batch. */
  actionError?: { code: string; message: string; at: string; skipped: number };
}

export interface MailboxOptions {
  entry: GraphEntry;
  user: string;
  folders: string[];
  instance: string;
  client: MailboxClient;
  log: Logger;
  subscriber?: Subscriber;
  /** With notifications: signals of notifications another replica received for this mailbox (src/pipeline/wake-board.ts). */
  board?: WakeWatch;
  /**
   * The process-wide pacer: a start or a retry waits for a slot, holds it through its token and
   * folder requests, and releases it (src/pipeline/pacer.ts).
   */
  paced?: (signal: AbortSignal) => Promise<() => void>;
  /** The mailbox's controls (src/controls/): exclude_folders, participants, skip, since. */
  controls: MailboxControls;
}

export class MailboxRunner {
  readonly health: MailboxHealth;
  private targets: FolderTarget[] = [];
  /** Folders a notification named since the last round (all of them when the poll is due). */
  private readonly dirty = new Set<string>();
  private wakeUp: AbortController | undefined;
  /** The error code last written to the mailbox's state record ('' = none). */
  active = false;
  private readonly filter: MessageFilter;
  /** The mailbox's state in the store (`graph:<name>/<user>`), written when its error changes. */
  private readonly record: MailboxRecord;
  /** `since` resolved once (a duration counts back from the first sync); null: none. */
  private since: Date | null | undefined;

  constructor(readonly opts: MailboxOptions) {
    this.record = new MailboxRecord(`graph:${opts.instance}`);
    this.health = {
      mailbox: opts.user,
      state: 'stopped',
      failures: 0,
      messages: 0,
      withoutAttachmentBytes: 0,
      requests: 0,
      throttled: 0,
      filtered: 0,
      folders: {},
    };
    this.filter = compileFilter(opts.controls, [opts.user]);
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
    this.wakeUp?.abort();
  }

  async run(sink: Intake, signal: AbortSignal): Promise<void> {
    this.opts.subscriber?.reset(this);
    this.active = true;
    this.health.state = 'starting';
    await this.opts.board?.baseline();
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          if (failures > 0 || this.targets.length === 0) await this.start(signal);
          await this.round(sink, signal, failures > 0 ? undefined : this.takeDirty());
          failures = 0;
          delete this.health.lastError;
          delete this.health.nextAttemptAt;
          this.health.state = 'idle';
          await this.record.keep(sink, this.health.lastError, this.health.nextAttemptAt);
          await this.opts.subscriber?.ensure(this, this.targets, signal, sink);
          await this.idle(signal);
        } catch (err) {
          if (signal.aborted) break;
          failures += 1;
          this.fail(err, failures);
          await this.record.keep(sink, this.health.lastError, this.health.nextAttemptAt);
          await sleep(Date.parse(this.health.nextAttemptAt!) - Date.now(), signal);
        }
      }
    } finally {
      this.health.state = 'stopped';
      this.active = false;
    }
  }

  /** A start or a retry: under a pacer slot, the token and the folders (the mailbox's first requests). */
  private async start(signal: AbortSignal): Promise<void> {
    const release = (await this.opts.paced?.(signal)) ?? (() => undefined);
    try {
      if (this.targets.length === 0) this.targets = await this.resolve(signal);
      else await this.opts.client.token(signal);
    } finally {
      release();
    }
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

  private async round(sink: Intake, signal: AbortSignal, only: Set<string> | undefined): Promise<void> {
    this.health.state = 'syncing';
    const { entry, client, log, instance } = this.opts;
    this.since ??= (await resolveSince(this.opts.controls.since, sink, `graph:${instance}`)) ?? null;
    const report = sink.filtered?.bind(sink);
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
          since: this.since ?? undefined,
          onFiltered: (folder, reason) => {
            this.health.filtered += 1;
            report?.({ route: entry.route, adapter: 'graph', instance, folder, reason });
          },
        },
        target,
      );
      this.health.folders[target.path] = { lastSyncAt: new Date().toISOString(), syncedUntil: started };
    }
    this.health.lastSyncAt = new Date().toISOString();
    this.health.requests = client.stats.counted;
    this.health.throttled = client.stats.throttled;
  }

  /** Until the poll is due, a notification arrives, or a subscription needs renewing. */
  private async idle(signal: AbortSignal): Promise<void> {
    if (this.dirty.size > 0) return;
    this.wakeUp = new AbortController();
    const renewIn = this.opts.subscriber?.nextRenewalMs(this) ?? Number.POSITIVE_INFINITY;
    const wait = Math.min(this.opts.entry.poll_interval_ms, renewIn);
    const woken = AbortSignal.any([signal, this.wakeUp.signal]);
    // A notification received by another replica: every folder (it may not know which).
    if (this.opts.board === undefined) await sleep(wait, woken);
    else if (await this.opts.board.sleep(wait, woken)) this.wake();
    this.wakeUp = undefined;
  }

  private fail(err: unknown, failures: number): void {
    const code: ErrorCode = isGatewayError(err) ? err.code : 'MAILGATE_ERR_GRAPH_UNAVAILABLE';
    const message = (err as Error).message;
    const refused = REFUSALS.has(code);
    const wait = Math.round(backoffDelay(failures - 1, refused ? REFUSED : TRANSIENT));
    this.health.failures += 1;
    this.health.state = 'backoff';
    this.health.lastError = { code, message, at: new Date().toISOString() };
    this.health.nextAttemptAt = new Date(Date.now() + wait).toISOString();
    // A folder that vanished is looked up again at the next attempt.
    if (code === 'MAILGATE_ERR_GRAPH_NOT_FOUND') this.targets = [];
    this.opts.log[refused ? 'error' : 'warn'](
      { code, retryInMs: wait, attempt: failures },
      `mailbox ${this.opts.user}: ${message}; next attempt in ${Math.round(wait / 1000)} s`,
    );
  }

  line(): AdapterHealth {
    const h = this.health;
    return {
      name: this.opts.instance,
      ok: h.state === 'idle' || h.state === 'syncing',
      state: h.state,
      detail: { ...h, lastSyncAt: h.lastSyncAt ?? null },
      ...(h.lastError ? { lastError: { code: h.lastError.code, message: h.lastError.message } } : {}),
      folders: this.opts.folders.map((folder): FolderSync => {
        const f = h.folders[folder];
        const done = f?.inProgress !== true && f?.lastSyncAt !== undefined;
        return {
          folder,
          state: done ? 'up_to_date' : 'in_progress',
          ...(f?.syncedUntil ? { syncedUntil: f.syncedUntil } : {}),
          ...(f?.lastSyncAt ? { lastSynced: f.lastSyncAt } : {}),
        };
      }),
    };
  }
}
