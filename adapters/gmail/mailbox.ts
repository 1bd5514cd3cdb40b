/**
 * One mailbox of a Gmail connection: resolves its labels, runs a round (sync.ts), then waits for
 * a push (which wakes it) or the safety poll (`poll_interval_ms`), and keeps its watch renewed.
 * A failure — the token endpoint refusing (delegation not granted), Gmail answering 401 after a
 * renewal, 403, 404, unreachable — is recorded as the mailbox's coded error (kept in the store
 * for `mailgate status`) and retried after a backoff; other mailboxes never wait for it.
 */
import { GatewayError, isGatewayError, type ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { sleep } from '../../src/pipeline/sleep.js';
import { MailboxRecord } from '../../src/pipeline/mailbox-record.js';
import type { AdapterHealth, FolderSync, Intake } from '../../src/pipeline/types.js';
import { compileFilter, type MessageFilter } from '../../src/controls/filter.js';
import type { MailboxControls } from '../../src/controls/schema.js';
import { resolveSince } from '../../src/controls/since.js';
import type { WakeWatch } from '../../src/pipeline/wake-board.js';
import { backoffDelay, type Backoff } from '../../src/retry.js';
import type { GmailClient } from './client.js';
import type { GmailEntry } from './config.js';
import { round, type LabelTarget } from './sync.js';
import type { Watcher } from './watch.js';

export type MailboxState = 'starting' | 'syncing' | 'idle' | 'backoff' | 'stopped';

const REFUSED: Backoff = { baseMs: 30_000, capMs: 30 * 60_000, jitter: 'equal' };
const TRANSIENT: Backoff = { baseMs: 1_000, capMs: 60_000, jitter: 'full' };
const REFUSALS = new Set<ErrorCode>([
  'MAILGATE_ERR_GMAIL_DELEGATION',
  'MAILGATE_ERR_GMAIL_TOKEN',
  'MAILGATE_ERR_GMAIL_UNAUTHORIZED',
  'MAILGATE_ERR_GMAIL_FORBIDDEN',
  'MAILGATE_ERR_GMAIL_NOT_FOUND',
]);

export interface MailboxHealth {
  mailbox: string;
  state: MailboxState;
  lastError?: { code: string; message: string; at: string };
  lastSyncAt?: string;
  nextAttemptAt?: string;
  failures: number;
  messages: number;
  /** Of those, read with format=full, attachments left on the server. */
  viaFull: number;
  requests: number;
  calls: number;
  quotaUnits: number;
  rateLimited: number;
  pushes: number;
}

export interface MailboxOptions {
  entry: GmailEntry;
  user: string;
  labels: string[];
  instance: string;
  client: GmailClient;
  log: Logger;
  watcher?: Watcher;
  /** With notifications: signals of pushes another replica received for this mailbox (src/pipeline/wake-board.ts). */
  board?: WakeWatch;
  /** The process-wide pacer (src/pipeline/pacer.ts): a start or a retry holds a slot through its token and label requests. */
  paced?: (signal: AbortSignal) => Promise<() => void>;
  /** The mailbox's controls (src/controls/): exclude_labels, participants, skip, since. */
  controls: MailboxControls;
}

export class MailboxRunner {
  readonly health: MailboxHealth;
  private labels: LabelTarget[] = [];
  private labelNames = new Map<string, string>();
  private dirty = false;
  private wakeUp: AbortController | undefined;
  /** Messages the controls left out; the start of the last complete round. */
  private filtered = 0;
  private syncedUntil: string | undefined;
  active = false;
  private readonly filter: MessageFilter;
  /** The mailbox's state in the store (`gmail:<name>/<user>`), written when its error changes. */
  private readonly record: MailboxRecord;
  /** `since` resolved once (a duration counts back from the first sync); null: none. */
  private since: Date | null | undefined;

  constructor(readonly opts: MailboxOptions) {
    this.record = new MailboxRecord(`gmail:${opts.instance}`);
    this.filter = compileFilter(opts.controls, [opts.user]);
    this.health = {
      mailbox: opts.user,
      state: 'stopped',
      failures: 0,
      messages: 0,
      viaFull: 0,
      requests: 0,
      calls: 0,
      quotaUnits: 0,
      rateLimited: 0,
      pushes: 0,
    };
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
    this.wakeUp?.abort();
  }

  async run(sink: Intake, signal: AbortSignal): Promise<void> {
    this.active = true;
    this.health.state = 'starting';
    await this.opts.board?.baseline();
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          if (failures > 0 || this.labels.length === 0) await this.start(signal);
          this.dirty = false;
          await this.round(sink, signal);
          failures = 0;
          delete this.health.lastError;
          delete this.health.nextAttemptAt;
          this.health.state = 'idle';
          await this.record.keep(sink, this.health.lastError, this.health.nextAttemptAt);
          await this.opts.watcher?.ensure(this, signal);
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

  /** The label ids read (for users.watch). */
  get labelIds(): string[] {
    return this.labels.map((l) => l.id);
  }

  private async start(signal: AbortSignal): Promise<void> {
    const release = (await this.opts.paced?.(signal)) ?? (() => undefined);
    try {
      await this.opts.client.token(signal);
      this.labels = await this.resolve(signal);
    } finally {
      release();
    }
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

  private async round(sink: Intake, signal: AbortSignal): Promise<void> {
    this.health.state = 'syncing';
    const { entry, client, log, instance } = this.opts;
    this.since ??= (await resolveSince(this.opts.controls.since, sink, `gmail:${instance}`)) ?? null;
    const report = sink.filtered?.bind(sink);
    const started = new Date().toISOString();
    await round({
      filter: this.filter,
      since: this.since ?? undefined,
      onFiltered: (label, reason) => {
        this.filtered += 1;
        report?.({ route: entry.route, adapter: 'gmail', instance, folder: label, reason });
      },
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
    });
    this.health.lastSyncAt = new Date().toISOString();
    this.syncedUntil = started;
    const s = client.stats;
    Object.assign(this.health, { requests: s.requests, calls: s.calls, quotaUnits: s.units, rateLimited: s.rateLimited });
  }

  /** Until the poll is due, a push arrives, or the watch needs renewing. */
  private async idle(signal: AbortSignal): Promise<void> {
    if (this.dirty) return;
    this.wakeUp = new AbortController();
    const renewIn = this.opts.watcher?.nextRenewalMs(this) ?? Number.POSITIVE_INFINITY;
    const wait = Math.min(this.opts.entry.poll_interval_ms, renewIn);
    const woken = AbortSignal.any([signal, this.wakeUp.signal]);
    // A push received by another replica.
    if (this.opts.board === undefined) await sleep(wait, woken);
    else if (await this.opts.board.sleep(wait, woken)) this.wake();
    this.wakeUp = undefined;
  }

  private fail(err: unknown, failures: number): void {
    const code: ErrorCode = isGatewayError(err) ? err.code : 'MAILGATE_ERR_GMAIL_UNAVAILABLE';
    const message = (err as Error).message;
    const refused = REFUSALS.has(code);
    const wait = Math.round(backoffDelay(failures - 1, refused ? REFUSED : TRANSIENT));
    this.health.failures += 1;
    this.health.state = 'backoff';
    this.health.lastError = { code, message, at: new Date().toISOString() };
    this.health.nextAttemptAt = new Date(Date.now() + wait).toISOString();
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
      detail: { ...h, filtered: this.filtered, lastSyncAt: h.lastSyncAt ?? null },
      ...(h.lastError ? { lastError: { code: h.lastError.code, message: h.lastError.message } } : {}),
      // One history cursor for the mailbox: each label is as far as the last round.
      folders: this.opts.labels.map(
        (label): FolderSync => ({
          folder: label,
          state: h.state !== 'syncing' && h.lastSyncAt !== undefined ? 'up_to_date' : 'in_progress',
          ...(this.syncedUntil ? { syncedUntil: this.syncedUntil } : {}),
          ...(h.lastSyncAt ? { lastSynced: h.lastSyncAt } : {}),
        }),
      ),
    };
  }
}
